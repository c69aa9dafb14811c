// SPDX-License-Identifier: Apache-2.0

/// The member names seen so far in one JSON object, for duplicate detection.
///
/// Names are compared by their UTF-8 bytes, not with `String`'s canonical equivalence, so that two names
/// are duplicates exactly when every other JSON parser would also see the same name twice.
///
/// A request body has a handful of members, so a linear scan of a small array is fastest; an object with
/// many members switches to a set, so a hostile body cannot make detection quadratic.
struct MemberNames {
    /// How many names are scanned linearly before the set takes over.
    static let linearLimit = 16

    private var small: [JSONText] = []
    private var large: Set<JSONText>?

    /// Records `name`; returns `false` if the object already had it.
    mutating func insert(_ name: JSONText) -> Bool {
        if large != nil {
            return large!.insert(name).inserted
        }
        for existing in small where existing == name {
            return false
        }
        if small.isEmpty {
            small.reserveCapacity(Self.linearLimit + 1)
        }
        small.append(name)
        if small.count > Self.linearLimit {
            large = Set(small)
            small = []
        }
        return true
    }
}
