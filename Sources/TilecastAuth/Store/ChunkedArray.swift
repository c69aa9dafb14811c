// SPDX-License-Identifier: Apache-2.0

/// An array kept in chunks of a fixed power-of-two length, so that growing it never copies what it holds.
///
/// A Swift array that outgrows its buffer copies every element into one twice the size. For the
/// in-memory store that meant a pause of tens of milliseconds inside the store's lock whenever a table of
/// a million records crossed a power of two. Here only the first chunk grows that way; every later
/// chunk is allocated at its full length (4 to 8 MiB, advised for huge pages by ``LargeBuffers``) when
/// the one before it is full, and nothing already stored moves. An element is found with a shift and a
/// mask, through a short array of chunks that stays in cache.
struct ChunkedArray<Element: Sendable>: Sendable, RandomAccessCollection, MutableCollection {
    /// Each chunk holds `1 << chunkShift` elements.
    private let chunkShift: Int
    private var chunks: [[Element]] = []
    private(set) var count = 0
    /// How many chunks ``reserveCapacity(_:)`` made: removals never free these, so that a reservation —
    /// resident memory a server asked for — outlasts a table that shrinks and grows again.
    private var reservedChunks = 0

    /// The largest size a chunk may take, in bytes; chunks are the largest power-of-two length below it.
    static var chunkByteLimit: Int { 8 << 20 }

    init() {
        let elements = Swift.max(1, Self.chunkByteLimit / Swift.max(1, MemoryLayout<Element>.stride))
        chunkShift = Int.bitWidth - 1 - elements.leadingZeroBitCount
    }

    /// Elements in one chunk.
    var chunkLength: Int { 1 << chunkShift }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "index in range")
            return chunks[position >> chunkShift][position & (chunkLength - 1)]
        }
        _modify {
            precondition(position >= 0 && position < count, "index in range")
            yield &chunks[position >> chunkShift][position & (chunkLength - 1)]
        }
        set {
            precondition(position >= 0 && position < count, "index in range")
            chunks[position >> chunkShift][position & (chunkLength - 1)] = newValue
        }
    }

    /// The first position in `range` whose element satisfies `predicate`, read chunk by chunk without
    /// a bounds check per element.
    @inline(__always)
    func firstIndex(in range: Range<Int>, where predicate: (Element) -> Bool) -> Int? {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range within the array")
        var position = range.lowerBound
        while position < range.upperBound {
            let chunk = position >> chunkShift
            let offset = position & (chunkLength - 1)
            let end = Swift.min(range.upperBound - position, chunkLength - offset) + offset
            let found = chunks[chunk].withUnsafeBufferPointer { buffer in
                buffer[offset..<end].firstIndex(where: predicate)
            }
            if let found {
                return position + (found - offset)
            }
            position += end - offset
        }
        return nil
    }

    /// Makes sure chunks for `capacity` elements exist, so that appending up to it allocates nothing,
    /// and that their memory is resident, so that appending up to it does not wait for the kernel to
    /// back a page (``LargeBuffers/populate(_:)``). Chunks that already existed are left as they are.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > 0 else { return }
        let needed = (capacity + chunkLength - 1) >> chunkShift
        if chunks.isEmpty {
            chunks.append(
                LargeBuffers.reserved(Element.self, capacity: Swift.min(capacity, chunkLength), populated: true)
            )
        } else if chunks[0].capacity < Swift.min(capacity, chunkLength) {
            LargeBuffers.reserve(&chunks[0], capacity: Swift.min(capacity, chunkLength), populated: true)
        }
        while chunks.count < needed {
            chunks.append(LargeBuffers.reserved(Element.self, capacity: chunkLength, populated: true))
        }
        reservedChunks = Swift.max(reservedChunks, needed)
    }

    /// The memory of each chunk, its unused capacity included, for the tests of its residency.
    var chunkMemory: [UnsafeRawBufferPointer] {
        chunks.map { chunk in
            chunk.withUnsafeBufferPointer { buffer in
                UnsafeRawBufferPointer(
                    start: buffer.baseAddress,
                    count: chunk.capacity * MemoryLayout<Element>.stride
                )
            }
        }
    }

    mutating func append(_ element: Element) {
        let chunk = count >> chunkShift
        if chunk == chunks.count {
            // The first chunk starts small and grows as an array does; later ones come at full length.
            chunks.append(chunk == 0 ? [] : LargeBuffers.reserved(Element.self, capacity: chunkLength))
        }
        chunks[chunk].append(element)
        count += 1
    }

    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast on an empty array")
        count -= 1
        let chunk = count >> chunkShift
        let element = chunks[chunk].removeLast()
        // An empty chunk is kept while it is the last one, so that a table hovering at a chunk boundary
        // does not allocate and free a chunk on every other write; the one after it goes, unless it was
        // reserved.
        if chunks.count > Swift.max(chunk + 2, reservedChunks) {
            chunks.removeLast()
        }
        return element
    }

    mutating func swapAt(_ first: Int, _ second: Int) {
        guard first != second else { return }
        let held = self[first]
        self[first] = self[second]
        self[second] = held
    }
}
