// SPDX-License-Identifier: Apache-2.0

import Foundation

/// The process's resident memory (Linux).
enum MemoryProbe {
    /// Resident bytes, from `/proc/self/statm`, or `nil` where `/proc` is not available.
    ///
    /// Before reading, glibc's `malloc_trim(0)` (looked up at run time, absent on other C libraries)
    /// hands the allocator's free pages back, so that what remains is what live allocations hold — not
    /// the storage a dictionary left behind when it doubled.
    static func residentBytes() -> Int? {
        trimAllocator()
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private static func trimAllocator() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
}
