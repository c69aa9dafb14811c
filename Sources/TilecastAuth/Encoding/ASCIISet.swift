// SPDX-License-Identifier: Apache-2.0

/// A set of ASCII bytes as a 128-bit mask, for checking the shape of a secret or a verifier.
///
/// A membership test is a shift and a mask, not a chain of range comparisons, and ``containsAll(_:)``
/// reads every byte whatever it finds — no early exit — so checking a secret's shape takes the same
/// time for every text of one length.
struct ASCIISet: Sendable {
    /// Bytes 0–63 and 64–127.
    private let low: UInt64
    private let high: UInt64

    /// The set whose members below 64 are the bits of `low` and from 64 to 127 those of `high`.
    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The set of every byte `isMember` accepts below 128 (for tests that check the constants below).
    init(_ isMember: (UInt8) -> Bool) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for byte in UInt8(0)..<128 where isMember(byte) {
            if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
        }
        self.init(low: low, high: high)
    }

    /// 1 when `byte` is in the set, else 0.
    @inline(__always)
    private func bit(_ byte: UInt8) -> UInt64 {
        let word = byte < 64 ? low : high
        // A byte of 128 or more is in neither word: its bit is cleared below.
        let inRange: UInt64 = byte < 128 ? 1 : 0
        return (word &>> UInt64(byte & 63)) & inRange
    }

    /// Whether `byte` is in the set.
    func contains(_ byte: UInt8) -> Bool { bit(byte) == 1 }

    /// Whether every byte of `bytes` is in the set.
    func containsAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var all: UInt64 = 1
        for index in 0..<bytes.count {
            all &= bit(bytes[index])
        }
        return all == 1
    }

    /// RFC 7636 §4.1's `unreserved`: `ALPHA / DIGIT / "-" / "." / "_" / "~"`. Constants, so that no use
    /// pays for a lazy initialisation; a test checks them against the definition.
    static let unreserved = ASCIISet(low: 0x03FF_6000_0000_0000, high: 0x47FF_FFFE_87FF_FFFE)

    /// The base64url alphabet (RFC 4648 §5): `A–Z a–z 0–9 - _`.
    static let base64URL = ASCIISet(low: 0x03FF_2000_0000_0000, high: 0x07FF_FFFE_87FF_FFFE)
}
