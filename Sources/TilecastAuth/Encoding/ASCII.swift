// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-level comparisons of strings, without `String`'s Unicode machinery.
///
/// Identifiers, URIs, header names and JSON member names are compared as bytes: canonical equivalence
/// would make look-alikes equal, and the generic `elementsEqual` over `UTF8View` costs far more than a
/// `memcmp`.
enum ASCII {
    /// Whether two strings have the same UTF-8 bytes.
    @inline(__always)
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count
            && withBytes(lhs, rhs) { left, right in
                left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
    }

    /// Whether two strings are equal when ASCII letters are compared without case (RFC 9110 §5.1 for
    /// field names, §8.3.1 for media types).
    @inline(__always)
    static func equalIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count
            && withBytes(lhs, rhs) { left, right in
                left.count == 0 || equalIgnoringCase(left.baseAddress!, right.baseAddress!, count: left.count)
            }
    }

    /// Whether `text` starts with `prefix`, ASCII letters compared without case.
    static func hasPrefixIgnoringCase(_ text: String, _ prefix: String) -> Bool {
        text.utf8.count >= prefix.utf8.count
            && withBytes(text, prefix) { left, right in
                right.count == 0 || equalIgnoringCase(left.baseAddress!, right.baseAddress!, count: right.count)
            }
    }

    /// Whether the `count` bytes at `left` and at `right` are equal when ASCII letters are compared
    /// without case: eight bytes at a time, each word lowercased at once (``lowercase(word:)``), and the
    /// last bytes of a run of eight or more as its last word, some of them compared already.
    static func equalIgnoringCase(_ left: UnsafePointer<UInt8>, _ right: UnsafePointer<UInt8>, count: Int) -> Bool {
        let left = UnsafeRawPointer(left)
        let right = UnsafeRawPointer(right)
        guard count >= 8 else {
            for offset in 0..<count
            where lowercase(left.load(fromByteOffset: offset, as: UInt8.self))
                != lowercase(right.load(fromByteOffset: offset, as: UInt8.self))
            {
                return false
            }
            return true
        }
        @inline(__always) func wordsEqual(at offset: Int) -> Bool {
            lowercase(word: left.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                == lowercase(word: right.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        var offset = 0
        while count - offset > 8 {
            guard wordsEqual(at: offset) else { return false }
            offset += 8
        }
        return wordsEqual(at: count - 8)
    }

    /// Eight bytes with their ASCII letters in lower case, any other byte unchanged — ``lowercase(_:)`` on
    /// each byte of a word at once. The uppercase letters are found among the bytes below 128
    /// (``ByteLanes/within(_:_:_:)`` on the word without its high bits, and only where the byte's own
    /// high bit is clear); the high bit of each, moved down two places, is the 0x20 that lowers it.
    @inline(__always)
    static func lowercase(word: UInt64) -> UInt64 {
        let uppercase =
            ByteLanes.within(word & ~ByteLanes.highBits, UInt8(ascii: "A"), UInt8(ascii: "Z")) & ~word
        return word | uppercase &>> 2
    }

    /// RFC 9110 §5.6.2 `tchar`: a byte of a token.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// An ASCII letter in lower case; any other byte unchanged.
    @inline(__always)
    static func lowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }

    /// Calls `body` with the UTF-8 bytes of both strings.
    @inline(__always)
    private static func withBytes(
        _ lhs: String,
        _ rhs: String,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        lhs.withLentUTF8 { left in rhs.withLentUTF8 { right in body(left, right) } }
    }
}

extension String {
    /// Calls `body` with the string's UTF-8 bytes. A native string lends them where they are; only a
    /// string without contiguous UTF-8 (bridged from another representation) is copied, and made native
    /// by `withUTF8`. `withUTF8` alone is `mutating`, so calling it on a copy costs a retain and a release
    /// even when nothing is copied.
    @inline(__always)
    func withLentUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) {
            return result
        }
        var copy = self
        return try copy.withUTF8(body)
    }
}
