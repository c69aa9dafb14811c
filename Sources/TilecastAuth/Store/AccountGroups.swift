// SPDX-License-Identifier: Apache-2.0

/// The records of each account in a ``RecordTable``, found without reading any other record: a list
/// through the records' positions for each account, and an index from the account to the position of
/// its list's first record.
///
/// An account's grants (``GrantStore/grants(of:)``) and its codes and grants to revoke
/// (``GrantStore/revokeGrants(of:reason:at:)``) were found by reading every record of the table — at a
/// million grants, 64–69 and 26–28 ms inside the store's lock, with every request waiting behind it.
/// Through the lists each costs what the account holds. Every change is a few writes: an added record goes at
/// the front of its account's list; a removed one is unlinked, and the last record, which takes its
/// place in the table, has its neighbours and its account's index entry told its new position.
///
/// Each record costs 8 bytes of links, kept beside it position for position as its due second is, and
/// each account an index bucket (8 bytes, the index 64 % to 80 % full).
struct AccountGroups: Sendable {
    /// A record's neighbours in its account's list, by position; ``none`` at either end.
    struct Link: Sendable, Equatable {
        var previous: UInt32
        var next: UInt32
    }

    static let none = UInt32.max

    /// For each record, its neighbours.
    private var links: ChunkedArray<Link>
    /// From each account's tag to the position of the first record of its list.
    private var heads = TableIndex()
    /// Accounts with at least one record.
    private(set) var accountCount = 0
    /// Groups kept beside records chunked by `chunkLength`.
    init(chunkLength: Int) {
        links = ChunkedArray(chunkLength: chunkLength)
    }

    /// The memory of the links and the index, for the tests of residency.
    var memory: [UnsafeRawBufferPointer] {
        links.chunkMemory + [heads.bucketMemory]
    }

    /// Whether nothing is being made ahead of need for the links or the index.
    var isPreparationSettled: Bool { links.isPreparationSettled && heads.isPreparationSettled }

    /// Makes room for `capacity` records, each of an account of its own at worst, and makes it resident.
    mutating func reserveCapacity(_ capacity: Int) {
        links.reserveCapacity(capacity)
        heads.reserve(entries: capacity)
    }

    /// Moves a bounded part of a growing index's entries; once per write, as the table's own index does.
    mutating func migrateStep() {
        heads.migrateStep()
    }

    /// The position of the first record of `account`'s list; `accountAt` reads a record's account. Each
    /// candidate's links are asked for while its record is read to confirm the account: whoever asked for
    /// the head reads or writes them next.
    private func head(of account: AccountID, tag: UInt32, accountAt: (Int) -> AccountID?) -> Int? {
        heads.position(tag: tag) { candidate in
            links.prefetch(candidate)
            return accountAt(candidate) == account
        }
    }

    /// Puts the record just appended at `position` — the table's last — at the front of its account's
    /// list.
    mutating func append(at position: Int, account: AccountID, accountAt: (Int) -> AccountID?) {
        precondition(position == links.count, "records are linked as they are appended")
        let tag = Self.tag(of: account)
        if let head = head(of: account, tag: tag, accountAt: accountAt) {
            links.append(Link(previous: Self.none, next: UInt32(head)))
            links[head].previous = UInt32(position)
            heads.move(tag: tag, from: head, to: position)
            return
        }
        heads.makeRoom(forEntries: accountCount + 1)
        links.append(Link(previous: Self.none, next: Self.none))
        heads.insert(tag: tag, position: position)
        accountCount += 1
    }

    /// Takes the record at `position`, of `account`, out of its list, and moves the links of the last
    /// record, of `lastAccount`, to `position`, where the table moves that record.
    mutating func remove(at position: Int, account: AccountID, lastAccount: AccountID) {
        let removed = links[position]
        if removed.previous != Self.none {
            links[Int(removed.previous)].next = removed.next
        } else if removed.next != Self.none {
            heads.move(tag: Self.tag(of: account), from: position, to: Int(removed.next))
        } else {
            heads.remove(tag: Self.tag(of: account), position: position)
            accountCount -= 1
        }
        if removed.next != Self.none {
            links[Int(removed.next)].previous = removed.previous
        }
        let last = links.count - 1
        if position != last {
            // Read after the unlinking, which may have changed the last record's neighbours.
            let moved = links[last]
            if moved.previous != Self.none {
                links[Int(moved.previous)].next = UInt32(position)
            } else {
                heads.move(tag: Self.tag(of: lastAccount), from: last, to: position)
            }
            if moved.next != Self.none {
                links[Int(moved.next)].previous = UInt32(position)
            }
            links[position] = moved
        }
        links.removeLast()
    }

    /// The positions of `account`'s records, most recently added first. `prefetchRecord` is told each
    /// position as soon as it is known, so that the record's cache line can be on its way while the list
    /// is followed: in a large table each link and each record is a miss of its own, and the next link
    /// does not wait for the record, only for the link before it.
    ///
    /// `tag` is ``tag(of:)`` of `account`, for a caller that looks the account up in more than one table.
    func positions(
        of account: AccountID,
        tag: UInt32? = nil,
        accountAt: (Int) -> AccountID?,
        prefetchRecord: (Int) -> Void = { _ in }
    ) -> [Int] {
        guard var position = head(of: account, tag: tag ?? Self.tag(of: account), accountAt: accountAt) else {
            return []
        }
        var positions = [position]
        while links[position].next != Self.none {
            position = Int(links[position].next)
            links.prefetch(position)
            prefetchRecord(position)
            positions.append(position)
        }
        return positions
    }

    /// Brings the index bucket where the account with `tag` would be found into the cache; see
    /// ``TableIndex/prefetch(tag:)``.
    func prefetchHead(tag: UInt32) {
        heads.prefetch(tag: tag)
    }

    /// What the index files `account` under: its hash, the same in every table of one process.
    static func tag(of account: AccountID) -> UInt32 {
        UInt32(truncatingIfNeeded: account.hashValue)
    }
}
