// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A binary min-heap of (expiry, key) pairs: the in-memory store's schedule of account revocations to
/// forget.
///
/// An entry is a reminder, not a promise: when it comes due the store looks the record up again and
/// drops it only if the record still exists and has really expired. Records replaced or extended in
/// the meantime simply leave a stale entry behind, which costs one lookup when it surfaces.
struct ExpiryQueue<Key: Sendable>: Sendable {
    private struct Entry: Sendable {
        var expiresAt: Date
        var key: Key
    }

    private var entries: [Entry] = []

    /// Schedules `key` to be looked at once `expiresAt` is reached.
    mutating func schedule(_ key: Key, at expiresAt: Date) {
        entries.append(Entry(expiresAt: expiresAt, key: key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].expiresAt < entries[parent].expiresAt else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(at now: Date) -> Key? {
        guard let first = entries.first, first.expiresAt <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count && entries[left].expiresAt < entries[smallest].expiresAt {
                    smallest = left
                }
                if right < entries.count && entries[right].expiresAt < entries[smallest].expiresAt {
                    smallest = right
                }
                guard smallest != parent else { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.key
    }
}
