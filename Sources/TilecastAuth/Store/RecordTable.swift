// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A record an ``InMemoryGrantStore`` keeps in a ``RecordTable``: it carries its own key.
protocol TableRecord: Sendable {
    associatedtype Key: TableKey
    var key: Key { get }
    /// The account by which the table lists its records (``RecordTable/positions(of:)``), for a kind of
    /// record whose table does (``isListedByAccount``). A record replaced by one of another account moves
    /// to that account's list.
    var listingAccount: AccountID? { get }
    /// Whether a table of these records lists them by account.
    static var isListedByAccount: Bool { get }
}

extension TableRecord {
    var listingAccount: AccountID? { nil }
    static var isListedByAccount: Bool { false }
}

/// A key of a ``RecordTable``: 32 well-mixed bits of it place it in the index.
protocol TableKey: Hashable, Sendable {
    var tableTag: UInt32 { get }
}

extension TableKey {
    /// The low bits of the key's hash, seeded per process like every `Hasher`.
    var tableTag: UInt32 { UInt32(truncatingIfNeeded: hashValue) }
}

extension SecretDigest: TableKey {
    /// Bits 32 to 63 of the digest itself, without hashing again. Every stored digest is SHA-256 of 256
    /// random bits from the OS CSPRNG, so stored tags are uniform and nobody can choose them; a presented
    /// secret only chooses where its own lookup starts probing, among runs it cannot see.
    var tableTag: UInt32 { words.w1 }
}

extension GrantID: TableKey {
    /// The id's sixteen bytes mixed into 32 bits by two full-width multiplies keyed per process, where
    /// `hashValue` ran SipHash-1-3 over them: a refresh places its grant by id twice, and SipHash was about
    /// a fiftieth of it. A grant's id is a version 4 UUID the server mints from the OS CSPRNG, never chosen
    /// by a client, so the mix needs to spread ids, not to withstand someone choosing them.
    ///
    /// Each half is masked with a key, and the two are multiplied to 128 bits: every bit of the product's
    /// high half draws on every bit of both factors, so ids that differ only in bytes that land in a
    /// half's top bits — big-endian counters read as little-endian words, which sank an earlier fold
    /// (`Docs/Performance.md`, "A grant's place without SipHash") — still differ there. The product's
    /// halves folded together are multiplied again, keyed, and the top 32 bits of that fold, which place
    /// the id in the index, draw on all of it.
    var tableTag: UInt32 {
        let (first, second) = withUnsafeBytes(of: rawValue.uuid) {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        let key = grantTagKey
        let product = (first ^ key.first).multipliedFullWidth(by: second ^ key.second)
        let spread = (product.high ^ product.low ^ key.third).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
        return UInt32(truncatingIfNeeded: (spread.high ^ spread.low) >> 32)
    }
}

/// The keys of ``GrantID``'s table tag: from `Hasher`, so that they are random per process as every hash
/// is, and fixed when the process asks for deterministic hashing (`SWIFT_DETERMINISTIC_HASHING`) — as
/// SipHash's seed then is, so that ids built against the known keys (a half equal to a key, say) collide
/// under either. Three keys, not one: with one key for both halves, ids whose halves are swapped would
/// share a tag.
private let grantTagKey: (first: UInt64, second: UInt64, third: UInt64) = {
    func word(_ salt: UInt64) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(salt)
        return UInt64(truncatingIfNeeded: hasher.finalize())
    }
    return (word(1), word(2), word(3))
}()

/// The records of one kind, packed in a dense array and found by key through an open-addressing index.
///
/// Swift's `Dictionary` doubles when it fills to three quarters, so at a million records it may be only
/// 48 % full, and it keeps every key beside its value — for a digest-keyed record, the digest twice.
/// This table keeps each record once, in a ``ChunkedArray`` whose chunks never move once written (its
/// unused capacity is address space, not resident memory, unless it was reserved), and finds them
/// through a ``TableIndex`` of 8-byte buckets that grows by a quarter whenever it is 80 % full, so it
/// stays 64 % to 80 % full.
/// Removing a record moves the last one into its place, so the array stays dense.
///
/// Beside each record the table keeps the whole second at which the record may come due, which lets
/// ``sweep(at:budget:isDue:)`` walk 16 candidates per cache line and read a record only when its time
/// may have come. A table of grants or codes also lists its records by account (``AccountGroups``), so
/// that an account's operations read that account's records and no others.
struct RecordTable<Record: TableRecord>: Sendable {
    /// The records, in no particular order.
    private(set) var records = ChunkedArray<Record>()
    /// For each record, the second (since 1970, rounded down) from which it may be due. Chunked as the
    /// records are: by its own 4 bytes an element, its first chunk would double towards two million
    /// entries — 8 MiB made ahead of need per table at a million records, and 4 MiB copied inside the
    /// store's lock at the last doubling.
    private var dueSeconds: ChunkedArray<UInt32>
    /// From each key's tag to its record's position.
    private var index = TableIndex()
    /// Each account's records, for a table that lists them (``TableRecord/isListedByAccount``).
    private var accounts: AccountGroups?
    /// Where the next sweep starts.
    private(set) var sweepCursor = 0
    /// No record in the table can come due before this second: a bound, not always the least due
    /// second — it is what the last whole pass of the sweeps kept (``passEarliestDueSecond``), lowered by
    /// every due second written since. While it is in the future, a sweep has nothing to find and looks
    /// at nothing — the case of almost every write to a table whose records last hours — and its cursor
    /// waits where it is.
    private(set) var earliestDueSecond = UInt32.max
    /// A bound below the due seconds of this pass: the least of the records the sweeps passed over and
    /// left since the pass began (when the cursor last wrapped round; ``rewindSweep()`` keeps it), and
    /// of every due second written, or record moved, since. Every record before the cursor is counted in
    /// it, so when the cursor wraps round it is at most the least due second in the table, and becomes
    /// ``earliestDueSecond``. It can be lower — a due second written and then moved later, a record
    /// counted and then removed — which costs one more pass before the table is skipped again.
    private(set) var passEarliestDueSecond = UInt32.max

    var count: Int { records.count }
    var isEmpty: Bool { records.isEmpty }

    /// Buckets in the index, for the tests of its fill.
    var bucketCount: Int { index.bucketCount }

    /// Whether nothing is being made ahead of need for the records, their due seconds or the index: for
    /// tests, which wait until it is ready.
    var isPreparationSettled: Bool {
        records.isPreparationSettled && dueSeconds.isPreparationSettled && index.isPreparationSettled
            && (accounts?.isPreparationSettled ?? true)
    }

    /// How many prepared buffers the index has taken: for tests.
    var preparedIndexBuffersTaken: Int { index.preparedBuffersTaken }

    /// How many prepared buffers the records and their due seconds have taken: for tests.
    var preparedRecordBuffersTaken: Int { records.preparedBuffersTaken + dueSeconds.preparedBuffersTaken }

    /// Whether the index is still moving entries out of the one it replaced.
    var isMigratingIndex: Bool { index.isMigrating }

    init() {
        dueSeconds = ChunkedArray(chunkLength: records.chunkLength)
        if Record.isListedByAccount {
            accounts = AccountGroups(chunkLength: records.chunkLength)
        }
    }

    /// The memory of the records, their due seconds and the index — and of the lists by account, where
    /// the table keeps them — for the tests of its residency.
    var memory: [UnsafeRawBufferPointer] {
        records.chunkMemory + dueSeconds.chunkMemory + [index.bucketMemory] + (accounts?.memory ?? [])
    }

    /// Makes room for `capacity` records without growing the index or the array, and makes that room
    /// resident, so that the writes it was made for do not wait for the kernel to back their pages.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > count else { return }
        records.reserveCapacity(capacity)
        dueSeconds.reserveCapacity(capacity)
        accounts?.reserveCapacity(capacity)
        index.reserve(entries: capacity)
    }

    // MARK: Finding

    /// The position of the record with `key`, if there is one.
    func position(of key: Record.Key) -> Int? {
        Self.position(of: key, index: index, records: records)
    }

    /// ``position(of:)`` with the index and the records passed in: a closure that captured `self` — the
    /// whole table, 312 bytes — had it copied onto the stack for every lookup (six a refresh), where
    /// capturing the records alone takes their 64.
    private static func position(of key: Record.Key, index: TableIndex, records: ChunkedArray<Record>) -> Int? {
        index.position(tag: tag(of: key)) { records.withElement(at: $0) { $0.key == key } }
    }

    /// Brings the index bucket where `key` would be found into the cache; see ``TableIndex/prefetch(tag:)``.
    func prefetch(_ key: Record.Key) {
        index.prefetch(tag: Self.tag(of: key))
    }

    @inline(__always)
    subscript(key: Record.Key) -> Record? {
        position(of: key).map { records[$0] }
    }

    subscript(position position: Int) -> Record {
        records[position]
    }

    /// Calls `body` with the record at `position` in place (``ChunkedArray/withElement(at:_:)``), for a
    /// reader of a field or two.
    func withRecord<Result>(at position: Int, _ body: (Record) throws -> Result) rethrows -> Result {
        try records.withElement(at: position, body)
    }

    /// The positions of `account`'s records, reading no other record; empty for a table that does not
    /// list its records by account.
    func positions(of account: AccountID, tag: UInt32? = nil) -> [Int] {
        accounts?.positions(
            of: account,
            tag: tag,
            accountAt: { records.withElement(at: $0) { $0.listingAccount } },
            prefetchRecord: records.prefetch
        )
            ?? []
    }

    /// Brings the index bucket of `account`'s list, by its ``AccountGroups/tag(of:)``, into the cache.
    func prefetchPositions(ofAccountTagged tag: UInt32) {
        accounts?.prefetchHead(tag: tag)
    }

    // MARK: Writing

    /// Stores `record`, replacing the record with the same key if there is one, to come due from `dueAt`.
    mutating func upsert(_ record: Record, dueAt: Date) {
        guard let position = position(of: record.key) else {
            return insert(record, dueAt: dueAt)
        }
        index.migrateStep()
        accounts?.migrateStep()
        guard accounts == nil || records.withElement(at: position, { $0.listingAccount }) == record.listingAccount
        else {
            // Of another account — the store never does this, but a hand-built snapshot or a reused id
            // can: out of the old account's list, and inserted again, into the new one's.
            remove(at: position)
            return insert(record, dueAt: dueAt)
        }
        records[position] = record
        setDueSecond(at: position, Self.wholeSeconds(dueAt))
    }

    /// Stores `record`, whose key the caller has just looked up and found unstored, to come due from
    /// `dueAt`: the store's writes refuse a stored key before they write anything, so looking the key up
    /// again, as ``upsert(_:dueAt:)`` does, would repeat that probe of the index for every record written.
    ///
    /// The record is taken over, so that a caller that made it for the table hands it on without a copy.
    mutating func insert(_ record: consuming Record, dueAt: Date) {
        assert(position(of: record.key) == nil, "the key of an inserted record is not stored")
        index.migrateStep()
        accounts?.migrateStep()
        index.makeRoom(forEntries: count + 1)
        let position = records.count
        index.insert(tag: Self.tag(of: record.key), position: position)
        if accounts != nil, let account = record.listingAccount {
            accounts!.append(at: position, account: account) { records.withElement(at: $0) { $0.listingAccount } }
        }
        records.append(record)
        let due = Self.wholeSeconds(dueAt)
        dueSeconds.append(due)
        noteDueSecond(due)
    }

    /// Changes the record at `position` in place; its key must stay the same.
    mutating func modify<Result>(at position: Int, _ body: (inout Record) -> Result) -> Result {
        let key = records.withElement(at: position) { $0.key }
        let result = body(&records[position])
        assert(records.withElement(at: position) { $0.key } == key, "a record's key never changes in place")
        return result
    }

    /// The second from which the record at `position` may be due, for the tests of the sweep's bounds.
    func dueSecond(at position: Int) -> UInt32 {
        dueSeconds[position]
    }

    /// Moves the time from which the record at `position` may be due.
    mutating func setDue(at position: Int, _ dueAt: Date) {
        setDueSecond(at: position, Self.wholeSeconds(dueAt))
    }

    private mutating func setDueSecond(at position: Int, _ due: UInt32) {
        dueSeconds[position] = due
        noteDueSecond(due)
    }

    /// Keeps both bounds below a due second just written.
    @inline(__always)
    private mutating func noteDueSecond(_ due: UInt32) {
        earliestDueSecond = Swift.min(earliestDueSecond, due)
        passEarliestDueSecond = Swift.min(passEarliestDueSecond, due)
    }

    /// Removes the record with `key`, if there is one.
    @discardableResult
    mutating func remove(_ key: Record.Key) -> Record? {
        position(of: key).map { remove(at: $0) }
    }

    /// Removes the record at `position`; the last record takes its place.
    @discardableResult
    mutating func remove(at position: Int) -> Record {
        index.migrateStep()
        index.remove(tag: Self.tag(of: records.withElement(at: position) { $0.key }), position: position)
        let last = records.count - 1
        if accounts != nil, let account = records.withElement(at: position, { $0.listingAccount }) {
            accounts!.migrateStep()
            accounts!.remove(
                at: position,
                account: account,
                lastAccount: records.withElement(at: last) { $0.listingAccount! }
            )
        }
        if position != last {
            index.move(tag: Self.tag(of: records.withElement(at: last) { $0.key }), from: last, to: position)
            records.swapAt(position, last)
            dueSeconds.swapAt(position, last)
            // The moved record may now be before the cursor, where this pass will not look.
            passEarliestDueSecond = Swift.min(passEarliestDueSecond, dueSeconds[position])
        }
        dueSeconds.removeLast()
        if last == 0 {
            earliestDueSecond = .max
            passEarliestDueSecond = .max
        }
        return records.removeLast()
    }

    // MARK: Sweeping

    /// Whether a record of the table can be due at `now`: if not, a sweep looks at nothing.
    ///
    /// Always inlined: called on a table held in a store being written, as a function of its own it was
    /// given a copy of the whole table (312 bytes, a `memcpy` on every write) to read one field of.
    @inline(__always)
    func mayHaveDue(at now: Date) -> Bool {
        Self.wholeSeconds(now) >= earliestDueSecond
    }

    /// Looks at up to `budget` records from where the last sweep stopped, wrapping around, and removes
    /// those that `isDue` confirms; returns how many it removed.
    ///
    /// `isDue` is asked only about records whose due second has come, and decides with the exact time.
    /// Each record looked at or removed uses one unit of the budget. A removal moves the last record
    /// into the removed one's place, where the sweep looks at it next — so a record can be looked at
    /// twice in a pass that wraps round, and going round the whole table can take up to twice its count
    /// when the pass removes records. While no record can be due yet (``earliestDueSecond``), a sweep
    /// looks at none and its cursor stays where it is.
    mutating func sweep(at now: Date, budget: Int, isDue: (Record) -> Bool) -> Int {
        let nowSeconds = Self.wholeSeconds(now)
        guard nowSeconds >= earliestDueSecond else { return 0 }
        var budget = min(budget, count)
        var removed = 0
        while budget > 0, !records.isEmpty {
            if sweepCursor >= records.count {
                // Round the whole table: every record's due second is counted in this pass's least.
                sweepCursor = 0
                earliestDueSecond = passEarliestDueSecond
                passEarliestDueSecond = .max
                guard nowSeconds >= earliestDueSecond else { break }
            }
            let span = Swift.min(budget, records.count - sweepCursor)
            guard
                let candidate = dueSeconds.firstIndex(
                    in: sweepCursor..<(sweepCursor + span),
                    atMost: nowSeconds,
                    passedLeast: &passEarliestDueSecond
                )
            else {
                sweepCursor += span
                budget -= span
                continue
            }
            budget -= candidate - sweepCursor + 1
            sweepCursor = candidate
            if records.withElement(at: candidate, isDue) {
                remove(at: candidate)
                removed += 1
            } else {
                passEarliestDueSecond = Swift.min(passEarliestDueSecond, dueSeconds[candidate])
                sweepCursor += 1
            }
        }
        return removed
    }

    /// ``sweep(at:budget:isDue:)`` for an `isDue` that reads another value too — the store's grants, for
    /// its codes — passed borrowed: a closure that captured it would need a copy of its own, and copying a
    /// table retains each of its buffers and releases them again, on every write.
    mutating func sweep<Context>(
        at now: Date,
        budget: Int,
        reading context: Context,
        isDue: (Record, Context) -> Bool
    ) -> Int {
        sweep(at: now, budget: budget) { isDue($0, context) }
    }

    /// Starts the next sweep at the first record, so that a sweep with a budget of ``count`` covers all.
    mutating func rewindSweep() {
        sweepCursor = 0
    }

    // MARK: Keys and times

    private static func tag(of key: Record.Key) -> UInt32 {
        key.tableTag
    }

    /// Whole seconds since 1970, rounded down and clamped to `UInt32`: monotonic in the date, so a record
    /// due by the exact time is always due by the second. A date that is not a number counts as 0, which
    /// only means `isDue` is asked.
    ///
    /// Between the two guards the seconds are positive, where converting truncates toward zero, which is
    /// rounding down: one instruction, where `rounded(.down)` is a call into the C library on a processor
    /// without SSE 4.1's `roundsd` — and this runs for every record a write stores and every table it sweeps.
    private static func wholeSeconds(_ date: Date) -> UInt32 {
        let seconds = date.timeIntervalSince1970
        guard seconds > 0 else { return 0 }
        guard seconds < Double(UInt32.max) else { return UInt32.max }
        return UInt32(seconds)
    }
}
