// SPDX-License-Identifier: Apache-2.0

internal import CTilecastMemory

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The open-addressing index of a ``RecordTable``: from a key's 32-bit tag to the record's position.
///
/// A bucket holds `tag << 32 | (position + 1)`; zero is an empty bucket. The tag fixes the bucket a
/// probe starts at (its home), scaled onto the index, so the index can grow and delete without reading
/// a record. Probing is linear; deletion shifts the rest of the run back, so there are no tombstones in
/// the index being filled.
///
/// **Growth without a pause.** Rebuilding an index of a million records took 15 to 45 ms, inside the
/// store's lock. So when the index is 80 % full, a new one a quarter larger takes over, and the old one
/// is retired rather than rebuilt: every later write moves ``migrationStepsPerWrite`` of its buckets
/// into the new one, leaving a tombstone behind so that probes in the old index still reach the
/// entries not yet moved. Until the old index is empty, a lookup that misses the new index probes the
/// old one too. A quarter's growth needs at least a fifth of the old bucket count in new records before
/// the next growth, and the migration finishes in a fifth of that; should it not have, the next growth
/// finishes it first.
struct TableIndex: Sendable {
    /// Old buckets moved on each write while an index is retiring.
    static let migrationStepsPerWrite = 64
    private static let tombstone = UInt64.max

    private var current: BucketBuffer?
    private var retiring: BucketBuffer?
    /// Old buckets already moved, from the first.
    private var migrated = 0
    /// The buckets of the next growth, made ahead of need (``prepareGrowth(to:)``).
    private var nextBuckets: BufferPreparation<BucketBuffer>?
    /// Held by this index alone, and by its copies until one asks for or takes prepared buckets: then that
    /// one makes a preparation of its own (``ownPreparation()``), so that a copy never takes — or gives up —
    /// the buckets made for the index it was copied from.
    private var preparationOwner = PreparationOwner()
    /// The count of entries at which the next growth is prepared (``preparationFill`` of the buckets),
    /// kept so that an insert compares integers rather than multiplying.
    private var preparationPoint = 0

    /// The index grows once it is this full…
    private static var maximumFill: Double { 0.8 }
    /// …by this factor.
    private static var growthFactor: Double { 1.25 }
    private static var minimumBuckets: Int { 16 }
    /// Half way from the fill after a growth to the next growth, the next index is made ahead of need.
    private static var preparationFill: Double { 0.72 }

    init() {}

    /// The size the index grows to from `bucketCount` buckets.
    private static func grownBucketCount(_ bucketCount: Int) -> Int {
        Swift.max(minimumBuckets, Int((Double(bucketCount) * growthFactor).rounded(.up)))
    }

    /// Before the insert that makes the index hold `entries` entries: grows it, by a quarter, if that
    /// would fill it past 80 % — so it stays 64 % to 80 % full — or asks for its next growth to be made
    /// ahead of need half way there.
    mutating func makeRoom(forEntries entries: Int) {
        if Double(entries) > Double(bucketCount) * Self.maximumFill {
            let needed = Int(Double(entries) / Self.maximumFill) + 1
            grow(to: Swift.max(Self.grownBucketCount(bucketCount), needed), incrementally: true)
            preparationPoint = Int(Double(bucketCount) * Self.preparationFill)
        } else if entries == preparationPoint {
            prepareGrowth(to: Self.grownBucketCount(bucketCount))
        }
    }

    /// Grows the index at once, resident, so that it holds `entries` entries without growing again.
    mutating func reserve(entries: Int) {
        let needed = Int((Double(entries) / Self.maximumFill).rounded(.up)) + 1
        if needed > bucketCount {
            grow(to: needed, incrementally: false)
            preparationPoint = Int(Double(bucketCount) * Self.preparationFill)
        }
    }

    /// Buckets in the index being filled.
    var bucketCount: Int { current?.count ?? 0 }

    /// Whether an old index is still being emptied into the current one.
    var isMigrating: Bool { retiring != nil }

    // MARK: Finding

    /// The position whose bucket has `tag` and which `matches` confirms, in either index.
    @inline(__always)
    func position(tag: UInt32, where matches: (Int) -> Bool) -> Int? {
        guard let current else { return nil }
        if let found = current.find(tag: tag, skippingTombstones: false, where: matches) {
            return found
        }
        return retiring?.find(tag: tag, skippingTombstones: true, where: matches)
    }

    /// Asks for the home bucket of `tag` in the index being filled to be brought into the cache, for a
    /// write that will probe it soon: a write probes its buckets one after another, so it waits for each
    /// miss in turn unless they were all asked for first.
    func prefetch(tag: UInt32) {
        guard let current else { return }
        tilecast_prefetch_for_writing(current.pointer + current.home(of: tag))
    }

    // MARK: Writing

    /// Points a bucket with `tag` at `position`; the key must not be in the index yet.
    mutating func insert(tag: UInt32, position: Int) {
        makeUnique()
        current!.place(Self.entry(tag: tag, position: position))
    }

    /// Removes the bucket that points at `position`.
    mutating func remove(tag: UInt32, position: Int) {
        makeUnique()
        let entry = Self.entry(tag: tag, position: position)
        if let bucket = current!.bucket(holding: entry) {
            current!.delete(at: bucket)
        } else if let retiring, let bucket = retiring.bucket(holding: entry) {
            retiring.pointer[bucket] = Self.tombstone
        } else {
            preconditionFailure("every record has its bucket")
        }
    }

    /// Points the bucket that points at `old` at `new` instead.
    mutating func move(tag: UInt32, from old: Int, to new: Int) {
        makeUnique()
        let entry = Self.entry(tag: tag, position: old)
        let moved = Self.entry(tag: tag, position: new)
        if let bucket = current!.bucket(holding: entry) {
            current!.pointer[bucket] = moved
        } else if let retiring, let bucket = retiring.bucket(holding: entry) {
            retiring.pointer[bucket] = moved
        } else {
            preconditionFailure("every record has its bucket")
        }
    }

    /// The memory of the current buckets, for the tests of its residency.
    var bucketMemory: UnsafeRawBufferPointer {
        guard let current else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: current.pointer, count: current.count * MemoryLayout<UInt64>.stride)
    }

    /// Replaces the index with one of `bucketCount` buckets. The old one's entries move now if
    /// `incrementally` is false — a reservation, whose buckets are made resident too, so that the writes
    /// it was made for do not wait for the kernel to back them — and over the next writes otherwise.
    mutating func grow(to bucketCount: Int, incrementally: Bool) {
        makeUnique()
        finishMigration()
        // Buckets made ahead of need are resident already, as a reservation's must be. Any of another size,
        // or still being made, are given up: the next growth is larger.
        ownPreparation()
        let prepared = nextBuckets?.take(size: bucketCount, abandoningLate: true)
        let grown = prepared ?? BucketBuffer(count: bucketCount, populated: !incrementally)
        retiring = current
        current = grown
        migrated = 0
        if !incrementally {
            finishMigration()
        }
    }

    /// Asks for the buckets of a growth to `bucketCount` to be allocated and made resident off the
    /// caller's thread (``BufferPreparation``), so that the writes after the growth — which place entries
    /// all over the new buckets — do not each wait for the kernel to back another page. Only for an index
    /// large enough to be advised onto huge pages: a smaller one's pages are backed 4 KiB at a time, and
    /// its growth was never measured to wait.
    mutating func prepareGrowth(to bucketCount: Int) {
        guard bucketCount * MemoryLayout<UInt64>.stride >= LargeBuffers.adviceThreshold else { return }
        ownPreparation()
        if nextBuckets == nil {
            nextBuckets = BufferPreparation()
        }
        nextBuckets!.prepare(size: bucketCount) { BucketBuffer(count: bucketCount, populated: true) }
    }

    /// Makes the preparation this index's own, if a copy shares it: a new, empty one, for the copy and the
    /// original alike, whichever asks first.
    private mutating func ownPreparation() {
        guard !isKnownUniquelyReferenced(&preparationOwner) else { return }
        preparationOwner = PreparationOwner()
        nextBuckets = nil
    }

    /// Whether no buckets are being prepared: for tests, which wait until they are ready.
    var isPreparationSettled: Bool { nextBuckets?.isSettled ?? true }

    /// How many prepared bucket buffers growths have taken: for tests.
    var preparedBuffersTaken: Int { nextBuckets?.taken ?? 0 }

    /// Moves the next ``migrationStepsPerWrite`` old buckets, if an old index is retiring.
    @inline(__always)
    mutating func migrateStep() {
        guard retiring != nil else { return }
        makeUnique()
        migrate(Self.migrationStepsPerWrite)
    }

    private mutating func finishMigration() {
        guard let retiring else { return }
        migrate(retiring.count)
    }

    private mutating func migrate(_ steps: Int) {
        guard let retiring, let current else { return }
        let end = min(retiring.count, migrated + steps)
        for bucket in migrated..<end {
            let entry = retiring.pointer[bucket]
            if entry != 0 && entry != Self.tombstone {
                current.place(entry)
                retiring.pointer[bucket] = Self.tombstone
            }
        }
        migrated = end
        if migrated == retiring.count {
            self.retiring = nil
            migrated = 0
        }
    }

    private mutating func makeUnique() {
        if current != nil, !isKnownUniquelyReferenced(&current) {
            current = current!.copy()
        }
        if retiring != nil, !isKnownUniquelyReferenced(&retiring) {
            retiring = retiring!.copy()
        }
    }

    static func entry(tag: UInt32, position: Int) -> UInt64 {
        precondition(position >= 0 && position < Int(UInt32.max) - 1, "a record table holds fewer than 2³² − 2 records")
        return UInt64(tag) << 32 | UInt64(position + 1)
    }
}

/// One index's buckets, freed with the last reference. They are zeroed by `calloc`, which leaves a fresh
/// mapping's pages untouched, so that ``LargeBuffers`` can advise them before they are first written; a
/// reservation's buckets are then made resident (``LargeBuffers/populate(_:)``).
private final class BucketBuffer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<UInt64>
    let count: Int

    init(count: Int, populated: Bool = false) {
        precondition(count > 0, "an index has buckets")
        guard let memory = calloc(count, MemoryLayout<UInt64>.stride) else {
            fatalError("the in-memory store could not allocate \(count) index buckets")
        }
        let buckets = UnsafeMutableRawBufferPointer(start: memory, count: count * MemoryLayout<UInt64>.stride)
        LargeBuffers.advise(buckets)
        if populated {
            LargeBuffers.populate(buckets)
        }
        pointer = memory.bindMemory(to: UInt64.self, capacity: count)
        self.count = count
    }

    deinit {
        free(pointer)
    }

    func copy() -> BucketBuffer {
        let copy = BucketBuffer(count: count)
        copy.pointer.update(from: pointer, count: count)
        return copy
    }

    @inline(__always)
    func home(of tag: UInt32) -> Int {
        Int((UInt64(tag) &* UInt64(count)) >> 32)
    }

    @inline(__always)
    func next(_ bucket: Int) -> Int {
        bucket + 1 == count ? 0 : bucket + 1
    }

    @inline(__always)
    func find(tag: UInt32, skippingTombstones: Bool, where matches: (Int) -> Bool) -> Int? {
        var bucket = home(of: tag)
        while true {
            let entry = pointer[bucket]
            if entry == 0 { return nil }
            if UInt32(truncatingIfNeeded: entry >> 32) == tag, !(skippingTombstones && entry == UInt64.max) {
                let position = Int(UInt32(truncatingIfNeeded: entry)) - 1
                if matches(position) { return position }
            }
            bucket = next(bucket)
        }
    }

    /// The bucket holding exactly `entry`, probing from its home.
    func bucket(holding entry: UInt64) -> Int? {
        var bucket = home(of: UInt32(truncatingIfNeeded: entry >> 32))
        while true {
            let found = pointer[bucket]
            if found == entry { return bucket }
            if found == 0 { return nil }
            bucket = next(bucket)
        }
    }

    /// Puts `entry` in the first empty bucket from its home.
    func place(_ entry: UInt64) {
        var bucket = home(of: UInt32(truncatingIfNeeded: entry >> 32))
        while pointer[bucket] != 0 {
            bucket = next(bucket)
        }
        pointer[bucket] = entry
    }

    /// Empties `bucket` and shifts later entries of its run back, so that no probe stops early.
    func delete(at bucket: Int) {
        var hole = bucket
        var candidate = bucket
        while true {
            candidate = next(candidate)
            let entry = pointer[candidate]
            if entry == 0 { break }
            let home = home(of: UInt32(truncatingIfNeeded: entry >> 32))
            // The entry may fill the hole if its home is not after the hole on its way to where it is.
            let fromHome = (candidate - home + count) % count
            let fromHole = (candidate - hole + count) % count
            if fromHome >= fromHole {
                pointer[hole] = entry
                hole = candidate
            }
        }
        pointer[hole] = 0
    }
}
