// SPDX-License-Identifier: Apache-2.0

internal import CTilecastMemory

/// An array kept in chunks of a fixed power-of-two length, so that growing it never copies what it holds.
///
/// A Swift array that outgrows its buffer copies every element into one twice the size. For the
/// in-memory store that meant a pause of tens of milliseconds inside the store's lock whenever a table of
/// a million records crossed a power of two. Here only the first chunk grows that way; every later
/// chunk is allocated at its full length (4 to 8 MiB, advised for huge pages by ``LargeBuffers``) when
/// the one before it is full, and nothing already stored moves. An element is found with a shift and a
/// mask, through a short array of chunks that stays in cache.
///
/// Half way through its last chunk, the array has the next one allocated and made resident on a
/// background thread (``BufferPreparation``), so that the append that starts it, and the ones after,
/// do not wait for the kernel to back its pages; so is the first chunk's next size, once that is large.
struct ChunkedArray<Element: Sendable>: Sendable, RandomAccessCollection, MutableCollection {
    /// Each chunk holds `1 << chunkShift` elements.
    private let chunkShift: Int
    private var chunks: [[Element]] = []
    private(set) var count = 0
    /// How many chunks ``reserveCapacity(_:)`` made: removals never free these, so that a reservation —
    /// resident memory a server asked for — outlasts a table that shrinks and grows again.
    private var reservedChunks = 0
    /// The next chunk, or the first chunk's next size, made ahead of need; created by the first array
    /// that grows far enough to want one.
    private var nextChunk: BufferPreparation<[Element]>?
    /// Held by this array alone, and by its copies until one asks for or takes a prepared buffer: then
    /// that one makes a preparation of its own (``ownPreparation()``), so that a copy never takes — or
    /// gives up — a buffer made for the array it was copied from, which may be of the size it wants.
    private var preparationOwner = PreparationOwner()
    /// The last chunk in which the next one was asked for, so that it is asked for once per chunk.
    private var nextChunkRequestedIn = -1
    /// The count at which an append next looks at what to prepare (``considerPreparation(in:)``): one
    /// comparison per append instead of the look itself. Zero whenever the chunks change.
    private var nextPreparationCheck = 0

    /// The largest size a chunk may take, in bytes; chunks are the largest power-of-two length below it.
    static var chunkByteLimit: Int { 8 << 20 }

    init() {
        self.init(chunkLength: Swift.max(1, Self.chunkByteLimit / Swift.max(1, MemoryLayout<Element>.stride)))
    }

    /// An array whose chunks hold `chunkLength` elements, rounded down to a power of two — for an array
    /// kept beside another, position for position, which grows and prepares its chunks in step with it
    /// instead of by its own bytes.
    init(chunkLength: Int) {
        precondition(chunkLength > 0, "a chunk holds at least one element")
        chunkShift = Int.bitWidth - 1 - chunkLength.leadingZeroBitCount
    }

    /// Elements in one chunk.
    var chunkLength: Int { 1 << chunkShift }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    /// Calls `body` with the element at `position` where it lies in its chunk, without copying it out
    /// first: a reader of one field copies that field alone, where the subscript's getter copies the
    /// whole element, retaining every reference it holds, and releases it again.
    func withElement<Result>(at position: Int, _ body: (Element) throws -> Result) rethrows -> Result {
        precondition(position >= 0 && position < count, "index in range")
        return try chunks.withUnsafeBufferPointer { chunks in
            try chunks[position >> chunkShift].withUnsafeBufferPointer { chunk in
                try body(chunk[position & (chunkLength - 1)])
            }
        }
    }

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

    /// Asks for the cache lines of the element at `position` to be brought in, for a read that will come
    /// soon; nothing for a position out of range.
    func prefetch(_ position: Int) {
        guard position >= 0 && position < count else { return }
        chunks[position >> chunkShift].withUnsafeBufferPointer { chunk in
            guard let base = chunk.baseAddress else { return }
            let start = UnsafeRawPointer(base + (position & (chunkLength - 1)))
            let size = MemoryLayout<Element>.size
            // Every line the element touches: its first byte's, then one per 64 bytes up to its last.
            var offset = 0
            while offset < size {
                tilecast_prefetch_for_reading(start + offset)
                offset += 64
            }
            if size > 1 {
                tilecast_prefetch_for_reading(start + (size - 1))
            }
        }
    }

    /// The first position in `range` whose element satisfies `predicate`, read chunk by chunk without
    /// a bounds check per element.
    @inline(__always)
    func firstIndex(in range: Range<Int>, where predicate: (Element) -> Bool) -> Int? {
        firstIndex(in: range) { buffer, part in buffer[part].firstIndex(where: predicate) }
    }

    /// The position of the first element in `range` that `predicate` accepts, if there is one, with the
    /// search handed each chunk's part of the range in place (``firstIndex(in:where:)`` asks one element
    /// at a time; ``firstIndex(in:atMost:)`` compares sixteen at once).
    private func firstIndex(
        in range: Range<Int>,
        searchingChunks search: (UnsafeBufferPointer<Element>, Range<Int>) -> Int?
    ) -> Int? {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range within the array")
        var position = range.lowerBound
        while position < range.upperBound {
            let chunk = position >> chunkShift
            let offset = position & (chunkLength - 1)
            let end = Swift.min(range.upperBound - position, chunkLength - offset) + offset
            let found = chunks[chunk].withUnsafeBufferPointer { search($0, offset..<end) }
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
        nextPreparationCheck = 0
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

    mutating func append(_ element: consuming Element) {
        let chunk = count >> chunkShift
        if chunk == chunks.count {
            // The first chunk starts small and grows (``considerPreparation(in:)``); later ones come at
            // full length, made ahead of need if that was done in time.
            nextPreparationCheck = 0
            if chunk == 0 {
                chunks.append([])
            } else {
                chunks.append(
                    takePrepared(capacity: chunkLength, abandoningLate: false)
                        ?? LargeBuffers.reserved(Element.self, capacity: chunkLength)
                )
            }
        }
        if chunks[chunk].count == chunks[chunk].capacity {
            makeRoom(in: chunk)
        }
        chunks[chunk].append(element)
        count += 1
        if count >= nextPreparationCheck {
            considerPreparation(in: chunk)
        }
    }

    /// What the array does ahead of need, at the counts where it is due, out of the appends' way: asks
    /// for the next chunk half way through the last one, and for a growing first chunk's next size seven
    /// eighths of the way to its capacity — late enough that a store reserved for what it holds (a
    /// reservation is for a quarter more) does not prepare to outgrow it, and populate memory beside its
    /// requests, while four fifths full. Sets the count at which to look again. A full chunk is given
    /// room by the append that does not fit (``makeRoom(in:)``).
    @inline(never)
    private mutating func considerPreparation(in chunk: Int) {
        guard chunk == chunks.count - 1 else {
            // Chunks already exist past this one (reserved, or kept empty): look again in the last one.
            nextPreparationCheck = (chunks.count - 1) << chunkShift
            return
        }
        let capacity = chunks[chunk].capacity
        // A later chunk short of a chunk's length is one a copy of the array wrote to (Swift copies it
        // at its count): it is no first chunk to grow, and ``makeRoom(in:)`` gives it room when full.
        if capacity >= chunkLength || chunk > 0 {
            let halfWay = chunk << chunkShift + chunkLength >> 1
            if count >= halfWay, nextChunkRequestedIn != chunk {
                nextChunkRequestedIn = chunk
                prepare(capacity: chunkLength)
            }
            nextPreparationCheck = count < halfWay ? halfWay : (chunk + 1) << chunkShift
        } else {
            let sevenEighths = capacity - capacity >> 3
            if count == sevenEighths, 2 * capacity * MemoryLayout<Element>.stride >= Self.preparedGrowthThreshold {
                prepare(capacity: firstChunkGrowth(from: capacity))
            }
            nextPreparationCheck = count < sevenEighths ? sevenEighths : capacity
        }
    }

    /// Gives a full chunk room for the append that does not fit: grows the first chunk, and gives a later
    /// one its full length. A later chunk is full short of that length only in a copy of the array, which
    /// shares its chunks until it writes one — Swift then copies that chunk at its count, not its
    /// capacity. Left to the array's own growth, a chunk would double past a chunk's length, or move on
    /// each growth up to it.
    @inline(never)
    private mutating func makeRoom(in chunk: Int) {
        if chunk == 0 {
            growFirstChunk()
        } else {
            chunks[chunk].reserveCapacity(chunkLength)
        }
        nextPreparationCheck = 0
    }

    /// Grows the full first chunk, before the append that would not fit. Its elements move into the larger
    /// buffer made ready for it, whose memory is already resident; if that was not done in time, into one
    /// allocated now of the same size — never by an array's own growth, which could overshoot the chunk's
    /// length. That one is not advised for huge pages: backed as the copy writes it, 4 KiB pages wait less
    /// than 2 MiB ones (on the CI machine, about 3 ms against about 50 ms for 4 MiB of records).
    private mutating func growFirstChunk() {
        let capacity = firstChunkGrowth(from: chunks[0].capacity)
        if var grown = takePrepared(capacity: capacity, abandoningLate: true) {
            grown.append(contentsOf: chunks[0])
            chunks[0] = grown
        } else {
            chunks[0].reserveCapacity(capacity)
        }
    }

    /// The capacity a full first chunk of `capacity` grows to: twice the power of two nearest to it, up to
    /// a full chunk — a power of two, so that the last growth lands on the chunk's length and not an
    /// element short of it (an allocation's capacity is often a little off a power of two, either way).
    private func firstChunkGrowth(from capacity: Int) -> Int {
        guard capacity > 1 else { return Swift.min(chunkLength, 2) }
        let below = 1 << (Int.bitWidth - 1 - capacity.leadingZeroBitCount)
        let nearest = capacity - below > below >> 1 ? 2 * below : below
        return Swift.min(chunkLength, 2 * nearest)
    }

    /// The first chunk's growth is prepared ahead of need once the grown buffer is at least this large, in
    /// bytes: a smaller one is copied and backed in well under a millisecond.
    static var preparedGrowthThreshold: Int { 1 << 20 }

    /// Asks for an empty buffer of `capacity` elements to be allocated and made resident off the caller's
    /// thread (``considerPreparation(in:)`` says when).
    private mutating func prepare(capacity: Int) {
        ownPreparation()
        if nextChunk == nil {
            nextChunk = BufferPreparation()
        }
        nextChunk!.prepare(size: capacity) { LargeBuffers.reserved(Element.self, capacity: capacity, populated: true) }
    }

    /// The prepared buffer, if one for `capacity` elements is ready; one of another size is dropped. One
    /// still being made is given up with `abandoningLate` — a first chunk's growth, whose next request is
    /// of another size — and kept without it: a next chunk late for its chunk is the size of the one after.
    private mutating func takePrepared(capacity: Int, abandoningLate: Bool) -> [Element]? {
        ownPreparation()
        return nextChunk?.take(size: capacity, abandoningLate: abandoningLate)
    }

    /// Makes the preparation this array's own, if a copy shares it: a new, empty one, for the copy and the
    /// original alike, whichever asks first.
    private mutating func ownPreparation() {
        guard !isKnownUniquelyReferenced(&preparationOwner) else { return }
        preparationOwner = PreparationOwner()
        nextChunk = nil
        nextChunkRequestedIn = -1
    }

    /// Whether no chunk is being prepared: for tests, which wait until one is ready.
    var isPreparationSettled: Bool { nextChunk?.isSettled ?? true }

    /// How many prepared buffers the array has taken: for tests, which check that the memory it uses was
    /// the one prepared and not, say, freed memory the allocator handed out again already resident.
    var preparedBuffersTaken: Int { nextChunk?.taken ?? 0 }

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
            nextChunkRequestedIn = -1
            nextPreparationCheck = 0
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

extension ChunkedArray where Element == UInt32 {
    /// The position of the first element in `range` that is at most `limit`, if there is one: what
    /// ``firstIndex(in:where:)`` finds for `{ $0 <= limit }`, sixteen elements compared at once. It also
    /// asks for the cache lines of the sixteen elements after the range, in the same chunk, to be
    /// brought in.
    ///
    /// A table's sweep looks at sixteen due seconds of each of the store's five tables in which a record
    /// can be due, on every write, almost always finds none due, and the next write's sweep starts where
    /// this one stopped. Its cursor
    /// moves through each table a line per write, too slowly for the processor to see a stream: each
    /// sweep of each table waited for memory, which the read-ahead hides.
    ///
    /// The read-ahead is asked for once the search is done, outside the closure that is lent the chunk:
    /// a call into C there — which the compiler cannot see into — made it retain the chunk's storage
    /// around the search and release it after, on every table's sweep of every write (ten reference
    /// counts of a refresh's 77, counted with uprobes). The addresses stay valid, as the array is not
    /// changed in between, and a prefetch is a hint that never faults.
    ///
    /// `least` is lowered to the least of the elements it passed over: those of `range` before the one
    /// it returns, or all of `range` when it returns `nil`. A sweep keeps that to know, once it has been
    /// round the whole table, the earliest second any record left in it can come due.
    func firstIndex(in range: Range<Int>, atMost limit: UInt32, passedLeast least: inout UInt32) -> Int? {
        var readAhead: (first: UnsafeRawPointer, last: UnsafeRawPointer)?
        var passed = least
        let found = firstIndex(in: range) { buffer, part in
            if let base = buffer.baseAddress, part.upperBound < buffer.count {
                readAhead = (
                    UnsafeRawPointer(base + part.upperBound),
                    UnsafeRawPointer(base + Swift.min(part.upperBound + 15, buffer.count - 1))
                )
            }
            let bound = SIMD16<UInt32>(repeating: limit)
            var start = part.lowerBound
            if let base = UnsafeRawPointer(buffer.baseAddress) {
                var leastLanes = SIMD16<UInt32>(repeating: passed)
                defer { passed = leastLanes.min() }
                while part.upperBound - start >= 16 {
                    let lanes = base.loadUnaligned(
                        fromByteOffset: start * MemoryLayout<UInt32>.stride,
                        as: SIMD16<UInt32>.self
                    )
                    let due = lanes .<= bound
                    if any(due) {
                        for lane in 0..<16 {
                            if due[lane] { return start + lane }
                            leastLanes[0] = Swift.min(leastLanes[0], lanes[lane])
                        }
                    }
                    leastLanes = pointwiseMin(leastLanes, lanes)
                    start += 16
                }
            }
            for position in start..<part.upperBound {
                let element = buffer[position]
                if element <= limit { return position }
                passed = Swift.min(passed, element)
            }
            return nil
        }
        if let readAhead {
            tilecast_prefetch_for_reading(readAhead.first)
            tilecast_prefetch_for_reading(readAhead.last)
        }
        least = passed
        return found
    }
}
