// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Growth for the in-memory store's large arrays, with the kernel asked to back them by huge pages.
///
/// A store of a million grants spreads each operation's few records over tens of megabytes. With 4 KiB
/// pages nearly every one of those reads also misses the TLB, and on a virtual machine a TLB miss walks
/// two page tables; that is most of why an operation at a million grants cost up to 1.4× its cost at a
/// thousand. Linux's transparent huge pages are commonly enabled only for memory that asks for them
/// (`/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise`, the default of many distributions),
/// so a buffer of 4 MiB or more is advised with `MADV_HUGEPAGE` before it is first written, while its
/// pages are still unbacked. Smaller buffers, other systems and a refused advice change nothing but speed.
enum LargeBuffers {
    /// Buffers at least this large are advised.
    static let adviceThreshold = 4 << 20
    /// The size of a huge page on x86-64 and of the common arm64 configuration.
    private static let hugePageSize = 2 << 20

    /// An empty array with room for `capacity` elements, advised before anything is written to it.
    static func reserved<Element>(_: Element.Type, capacity: Int) -> [Element] {
        [Element](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            advise(UnsafeMutableRawBufferPointer(buffer))
            initialized = 0
        }
    }

    /// Gives `array` room for `capacity` elements in a new buffer that is advised before the elements
    /// are copied in — `reserveCapacity` would copy them first, onto small pages.
    static func reserve<Element>(_ array: inout [Element], capacity: Int) {
        guard capacity > array.capacity else { return }
        guard capacity * MemoryLayout<Element>.stride >= adviceThreshold else {
            array.reserveCapacity(capacity)
            return
        }
        var grown = reserved(Element.self, capacity: capacity)
        grown.append(contentsOf: array)
        array = grown
    }

    /// Advises the whole huge pages inside `buffer`, if it is large enough to hold some.
    static func advise(_ buffer: UnsafeMutableRawBufferPointer) {
        #if os(Linux)
        guard buffer.count >= adviceThreshold, let base = buffer.baseAddress else { return }
        let start = (UInt(bitPattern: base) + UInt(hugePageSize - 1)) & ~UInt(hugePageSize - 1)
        let end = (UInt(bitPattern: base) + UInt(buffer.count)) & ~UInt(hugePageSize - 1)
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        // A refusal (EINVAL on a kernel without transparent huge pages) leaves ordinary pages.
        _ = madvise(pointer, Int(end - start), MADV_HUGEPAGE)
        #endif
    }
}
