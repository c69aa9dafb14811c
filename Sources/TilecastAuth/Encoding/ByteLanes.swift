// SPDX-License-Identifier: Apache-2.0

/// Tests on the eight bytes of a 64-bit word at once, each byte's result in its high bit, for words whose
/// bytes are all below 128: the shape checks of ``ASCIISet``, the case folding of ``ASCII`` and the
/// JSON parser's skip of plain text read a text eight bytes at a time with them.
///
/// For a byte `b` below 128, `b + (0x80 - low)` sets the byte's high bit exactly when `b >= low`, and
/// `b + (0x7F - high)` exactly when `b > high`; `b ^ c` is below 128 too, and `(b ^ c) + 0x7F` sets the
/// high bit exactly when `b != c`. None of these sums reaches 256, so none carries into the next byte.
enum ByteLanes {
    /// 0x01 in every byte: `ones &* b` repeats the byte `b` eight times.
    static let ones: UInt64 = 0x0101_0101_0101_0101
    /// The high bit of every byte.
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` from `low` to `high`, every byte of `word` below 128.
    @inline(__always)
    static func within(_ word: UInt64, _ low: UInt8, _ high: UInt8) -> UInt64 {
        (word &+ ones &* UInt64(0x80 - low)) & ~(word &+ ones &* UInt64(0x7F - high)) & highBits
    }

    /// The high bit of each byte of `word` equal to `byte`, every byte of `word` and `byte` below 128.
    @inline(__always)
    static func equal(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        ~((word ^ (ones &* UInt64(byte))) &+ ones &* 0x7F) & highBits
    }
}
