// SPDX-License-Identifier: Apache-2.0

/// A set of ASCII bytes made of the letters, the digits and at most four more bytes, for checking the
/// shape of a secret or a verifier: the two alphabets the rules name are both of this form (RFC 4648 §5
/// and RFC 7636 §4.1).
///
/// ``containsAll(_:)`` tests eight bytes at a time with word arithmetic (``ByteLanes``), and reads every
/// byte whatever it finds — no early exit — so checking a secret's shape takes the same time for every
/// text of one length. As a 128-bit mask tested byte by byte, the check was 17 instructions a byte once the compiler had vectorised the
/// variable shifts, which SSE2 does not have; word by word it is about 7 (`Docs/Performance.md`).
struct ASCIISet: Sendable {
    /// The bytes besides the letters and digits, each below 128; a set of fewer than four repeats one.
    private let extras: (UInt8, UInt8, UInt8, UInt8)

    /// The letters, the digits and `extras`. Constant arguments make a constant set, so that no use of
    /// the static sets below pays for a lazy initialisation; a test checks them against their definitions.
    init(alphanumericsAnd extras: (UInt8, UInt8, UInt8, UInt8)) {
        self.extras = extras
    }

    /// The high bit of each byte of `word` that is in the set, every byte of `word` below 128.
    @inline(__always)
    private func members(_ word: UInt64) -> UInt64 {
        // A letter with 0x20 set is a lowercase letter, and no other byte becomes one.
        let letters = ByteLanes.within(word | ByteLanes.ones &* 0x20, UInt8(ascii: "a"), UInt8(ascii: "z"))
        let digits = ByteLanes.within(word, UInt8(ascii: "0"), UInt8(ascii: "9"))
        let extra =
            ByteLanes.equal(word, extras.0) | ByteLanes.equal(word, extras.1) | ByteLanes.equal(word, extras.2)
            | ByteLanes.equal(word, extras.3)
        return letters | digits | extra
    }

    /// Whether `byte` is in the set.
    func contains(_ byte: UInt8) -> Bool {
        byte < 0x80 && members(UInt64(byte)) & 0x80 != 0
    }

    /// Whether every byte of `bytes` is in the set.
    func containsAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let highBits = ByteLanes.highBits
        // The high bit of each byte of `word` outside the set, at or above 128 or not a member.
        @inline(__always) func outsiders(_ word: UInt64) -> UInt64 {
            (word & highBits) | (~members(word & ~highBits) & highBits)
        }
        // The high bit of each byte outside the set seen so far.
        var outside: UInt64 = 0
        var index = 0
        while bytes.count - index >= 8 {
            outside |= outsiders(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index += 8
        }
        if index < bytes.count {
            // The last bytes: in a text of eight or more, the last eight, some of them seen already; in a
            // shorter one, the text with "0" — a member of every set — in the places past its end.
            var word: UInt64
            if bytes.count >= 8 {
                word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
            } else {
                word = ByteLanes.ones &* UInt64(UInt8(ascii: "0"))
                for place in 0..<bytes.count {
                    let shift = UInt64(place * 8)
                    word = word & ~(0xFF &<< shift) | UInt64(bytes[place]) &<< shift
                }
            }
            outside |= outsiders(word)
        }
        return outside == 0
    }

    /// RFC 7636 §4.1's `unreserved`: `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
    static let unreserved = ASCIISet(
        alphanumericsAnd: (UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"))
    )

    /// The base64url alphabet (RFC 4648 §5): `A–Z a–z 0–9 - _`.
    static let base64URL = ASCIISet(
        alphanumericsAnd: (UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "_"))
    )
}
