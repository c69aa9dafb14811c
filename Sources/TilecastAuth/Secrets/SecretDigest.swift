// SPDX-License-Identifier: Apache-2.0

/// The SHA-256 digest of a secret: the only form in which a store ever sees a code, token or session id.
///
/// RFC 6819 §5.1.4.1.3 asks servers not to keep credentials in cleartext. A store that leaks its rows
/// leaks digests of 256-bit random values, from which no usable secret can be recovered. Because the
/// secrets are uniformly random and long, a plain hash is enough; there is nothing to brute-force, so no
/// salt or slow hash is needed.
///
/// Stores look records up by digest. Equality and hashing on a digest are ordinary (not constant-time):
/// learning how a digest compares to a stored one tells an attacker nothing about any secret.
public struct SecretDigest: Sendable {
    let words: SHA256Words

    init(words: SHA256Words) {
        self.words = words
    }

    /// Rebuilds a digest from the 32 bytes a store kept, or `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        let array = Array(bytes)
        func word(_ index: Int) -> UInt32 {
            UInt32(array[index * 4]) << 24 | UInt32(array[index * 4 + 1]) << 16
                | UInt32(array[index * 4 + 2]) << 8 | UInt32(array[index * 4 + 3])
        }
        self.words = SHA256Words(
            w0: word(0),
            w1: word(1),
            w2: word(2),
            w3: word(3),
            w4: word(4),
            w5: word(5),
            w6: word(6),
            w7: word(7)
        )
    }

    /// Computes the digest of a secret's full text, prefix included.
    init(of value: String) {
        self.words = SHA256.hash(utf8: value)
    }

    /// The 32 digest bytes, for a store that keeps them as a binary column.
    public var bytes: [UInt8] {
        words.bytes
    }

    /// The digest in lowercase hexadecimal, for a store that keeps text.
    public var hexadecimal: String {
        let digits: [Character] = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}

extension SecretDigest: Hashable {
    public static func == (lhs: SecretDigest, rhs: SecretDigest) -> Bool {
        lhs.words == rhs.words
    }

    /// Hashes the first 64 bits only. A digest is SHA-256 output, uniformly distributed, and the hasher
    /// is seeded per process, so nobody can choose digests that crowd one bucket; the other 192 bits
    /// would only cost time on every lookup.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(words.w0) << 32 | UInt64(words.w1))
    }
}

extension SecretDigest: CustomStringConvertible {
    /// The first four bytes only: enough to tell digests apart in a log, never the whole value.
    public var description: String {
        "SecretDigest(\(hexadecimal.prefix(8))…)"
    }
}
