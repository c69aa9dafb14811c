// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Growth for the in-memory store's large arrays, with the kernel asked to back them by huge pages, and
/// — for room reserved up front — made resident before the first request needs it.
///
/// A store of a million grants spreads each operation's few records over tens of megabytes. With 4 KiB
/// pages nearly every one of those reads also misses the TLB, and on a virtual machine a TLB miss walks
/// two page tables; that is most of why an operation at a million grants cost up to 1.4× its cost at a
/// thousand. Linux's transparent huge pages are commonly enabled only for memory that asks for them
/// (`/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise`, the default of many distributions),
/// so a buffer of 4 MiB or more is advised with `MADV_HUGEPAGE` before it is first written, while its
/// pages are still unbacked. Smaller buffers, other systems and a refused advice change nothing but speed.
///
/// A page is backed only when it is first written, and that first write waits while the kernel zeroes
/// it — 4 KiB, or 2 MiB for a huge page, and on a virtual machine whose host backs guest memory on first
/// touch as well, up to tens of milliseconds (`Docs/Performance.md`) — inside the store's lock, where
/// every request waits with it. Room that is *reserved*, for a size the server expects to reach, is
/// therefore written once when it is reserved (``populate(_:)``), so that its pages are resident before
/// the first request, as `-XX:+AlwaysPreTouch` does for a JVM's heap. Growth beyond the reservation is
/// populated too, but ahead of need and off the lock (``BufferPreparation``): populating a new 8 MiB
/// chunk inside the lock would make one write wait for all four of its huge pages.
enum LargeBuffers {
    /// Buffers at least this large are advised.
    static let adviceThreshold = 4 << 20
    /// The size of a huge page on x86-64 and of the common arm64 configuration.
    private static let hugePageSize = 2 << 20

    /// An empty array with room for `capacity` elements, advised before anything is written to it and,
    /// if `populated`, made resident (``populate(_:)``).
    static func reserved<Element>(_: Element.Type, capacity: Int, populated: Bool = false) -> [Element] {
        [Element](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            let memory = UnsafeMutableRawBufferPointer(buffer)
            advise(memory)
            if populated {
                populate(memory)
            }
            initialized = 0
        }
    }

    /// Gives `array` room for `capacity` elements in a new buffer that is advised before the elements
    /// are copied in — `reserveCapacity` would copy them first, onto small pages — and, if `populated`,
    /// made resident.
    static func reserve<Element>(_ array: inout [Element], capacity: Int, populated: Bool = false) {
        guard capacity > array.capacity else { return }
        guard populated || capacity * MemoryLayout<Element>.stride >= adviceThreshold else {
            array.reserveCapacity(capacity)
            return
        }
        var grown = reserved(Element.self, capacity: capacity, populated: populated)
        grown.append(contentsOf: array)
        array = grown
    }

    /// Backs every page of `buffer` now, by writing a zero byte into each: the first write of a page is
    /// what makes the kernel back it, and a later write to a resident page does not wait. The memory
    /// must be uninitialized or zero, since one byte of each page becomes zero.
    static func populate(_ buffer: UnsafeMutableRawBufferPointer) {
        guard !buffer.isEmpty else { return }
        var offset = 0
        while offset < buffer.count {
            buffer.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
            offset += pageSize
        }
        buffer.storeBytes(of: 0, toByteOffset: buffer.count - 1, as: UInt8.self)
    }

    /// The size of the smallest page: one write per this many bytes reaches every page.
    static let pageSize: Int = {
        #if canImport(Glibc) || canImport(Musl)
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
        #else
        return 4096
        #endif
    }()

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
