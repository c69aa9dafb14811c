// SPDX-License-Identifier: Apache-2.0

/// The member names seen so far in one JSON object, for duplicate detection.
///
/// Names are compared by their UTF-8 bytes, not with `String`'s canonical equivalence, so that two names
/// are duplicates exactly when every other JSON parser would also see the same name twice.
///
/// A request body has a handful of members, so a linear scan is fastest; an object with many members
/// switches to a set, so a hostile body cannot make detection quadratic. Up to ``linearLimit`` names
/// without escapes are kept as their offsets in the body, in two arrays held inline: an object of plain
/// names — every request's — is checked without allocating and without retaining the body. A name with
/// escapes is kept decoded, in an array made only when one comes. (As `SIMD16` vectors, which the scan
/// reads and the insertion writes one lane at a time by a variable index, each access went through
/// memory with more instructions: 142 more an exchange, counted with callgrind.)
struct MemberNames {
    /// How many names are scanned linearly before the set takes over.
    static let linearLimit = 16

    /// Where the plain names seen start and end in the body; the first `plainCount` places are used.
    private var plainStarts = InlineArray<16, Int32>(repeating: 0)
    private var plainEnds = InlineArray<16, Int32>(repeating: 0)
    private var plainCount = 0
    /// The names with escapes seen, decoded.
    private var decoded: [[UInt8]] = []
    /// Every name seen, once there are more than ``linearLimit``.
    private var large: Set<[UInt8]>?

    /// Records `name`, parsed from `source`; returns `false` if the object already had it.
    mutating func insert(_ name: ParsedString, in source: UnsafeRawBufferPointer) -> Bool {
        if large != nil {
            return large!.insert(name.bytes(in: source)).inserted
        }
        for place in 0..<plainCount {
            let seen = ParsedString.plain(Int(plainStarts[place])..<Int(plainEnds[place]))
            if seen.equals(name, in: source) {
                return false
            }
        }
        for seen in decoded where ParsedString.decoded(seen).equals(name, in: source) {
            return false
        }
        if plainCount + decoded.count == Self.linearLimit {
            var all = Set(decoded)
            for place in 0..<plainCount {
                all.insert(Array(source[Int(plainStarts[place])..<Int(plainEnds[place])]))
            }
            all.insert(name.bytes(in: source))
            large = all
            decoded = []
            plainCount = 0
            return true
        }
        switch name {
        case .plain(let range) where range.upperBound <= Int(Int32.max):
            plainStarts[plainCount] = Int32(range.lowerBound)
            plainEnds[plainCount] = Int32(range.upperBound)
            plainCount += 1
        case .plain, .decoded:
            // A body past 2 GiB has offsets an `Int32` cannot hold; such a name is kept as its bytes.
            decoded.append(name.bytes(in: source))
        }
        return true
    }
}
