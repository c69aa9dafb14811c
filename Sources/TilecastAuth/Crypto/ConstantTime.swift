// SPDX-License-Identifier: Apache-2.0

/// Comparisons whose running time does not depend on where two secrets differ.
///
/// RFC 7636 §4.6 has the server compare the recomputed challenge with the stored one; comparing with an
/// early exit would tell an attacker, through timing, how many leading bytes of a guess are right.
enum ConstantTime {
    /// Whether two SHA-256 digests are equal, examining every word whatever the answer.
    @inline(never)
    static func equals(_ lhs: SHA256Words, _ rhs: SHA256Words) -> Bool {
        var difference: UInt32 = 0
        difference |= lhs.w0 ^ rhs.w0
        difference |= lhs.w1 ^ rhs.w1
        difference |= lhs.w2 ^ rhs.w2
        difference |= lhs.w3 ^ rhs.w3
        difference |= lhs.w4 ^ rhs.w4
        difference |= lhs.w5 ^ rhs.w5
        difference |= lhs.w6 ^ rhs.w6
        difference |= lhs.w7 ^ rhs.w7
        return difference == 0
    }

}
