// SPDX-License-Identifier: Apache-2.0

internal import CTilecastBase64

/// Base64url without padding (RFC 4648 §5), as RFC 7636 §3 and Appendix A use it.
///
/// Written by hand because Foundation's Base64 plus character replacement costs more than all the
/// cryptography of one exchange. A minted secret's 32 bytes are encoded on SSSE3's byte shuffle where the
/// processor has it (the package's C target `CTilecastBase64`), and by the portable encoder below
/// everywhere else; the two are tested against each other.
enum Base64URL {
    /// Whether this processor encodes 32 bytes on its vector instructions, decided once (CPUID).
    static let encodesSecretsInVectors = tilecast_base64url_vector_available() == 1

    /// The RFC 4648 §5 alphabet.
    private static let alphabet: InlineArray<64, UInt8> = [
        0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x4F, 0x50,
        0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
        0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76,
        0x77, 0x78, 0x79, 0x7A, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x2D, 0x5F,
    ]

    /// The number of characters that encode `byteCount` bytes without padding.
    static func encodedCount(of byteCount: Int) -> Int {
        (byteCount * 4 + 2) / 3
    }

    /// Writes the encoding of `bytes` to `output`, which must hold `encodedCount(of: bytes.count)` bytes.
    static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) {
        if bytes.count == 32, encodesSecretsInVectors, output.count >= 43 {
            // 345 instructions a secret in the loop below, about 70 in vectors (callgrind).
            tilecast_base64url_encode32(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), output.baseAddress!)
            return
        }
        encodePortably(bytes, into: output)
    }

    /// ``encode(_:into:)`` without vector instructions, for any count: also what the vector encoder is
    /// tested against.
    static func encodePortably(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) {
        var input = 0
        var written = 0
        while input + 3 <= bytes.count {
            let triple = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8 | UInt32(bytes[input + 2])
            output[written] = alphabet[Int(triple >> 18)]
            output[written + 1] = alphabet[Int((triple >> 12) & 0x3F)]
            output[written + 2] = alphabet[Int((triple >> 6) & 0x3F)]
            output[written + 3] = alphabet[Int(triple & 0x3F)]
            input += 3
            written += 4
        }
        switch bytes.count - input {
        case 1:
            let value = UInt32(bytes[input]) << 16
            output[written] = alphabet[Int(value >> 18)]
            output[written + 1] = alphabet[Int((value >> 12) & 0x3F)]
        case 2:
            let value = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8
            output[written] = alphabet[Int(value >> 18)]
            output[written + 1] = alphabet[Int((value >> 12) & 0x3F)]
            output[written + 2] = alphabet[Int((value >> 6) & 0x3F)]
        default:
            break
        }
    }

    /// Encodes `bytes` as a string.
    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedCount(of: bytes.count)) { output in
            encode(bytes, into: output)
            return encodedCount(of: bytes.count)
        }
    }

    /// Encodes `bytes` as a string.
    static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// The 6-bit value of an alphabet character, or `nil` for any other byte.
    @inline(__always)
    static func value(of character: UInt8) -> UInt8? {
        switch character {
        case 0x41...0x5A: character - 0x41
        case 0x61...0x7A: character - 0x61 + 26
        case 0x30...0x39: character - 0x30 + 52
        case 0x2D: 62
        case 0x5F: 63
        default: nil
        }
    }

    /// Decodes the 43-character canonical base64url of a SHA-256 digest without allocating, or `nil` for
    /// anything else.
    static func decodeDigest(_ text: String) -> SHA256Words? {
        text.withLentUTF8 { characters -> SHA256Words? in
            guard characters.count == 43 else { return nil }
            var words = InlineArray<8, UInt32>(repeating: 0)
            var byteCount = 0
            let canonical = decodeCanonically(characters) { byte in
                words[byteCount / 4] = words[byteCount / 4] << 8 | UInt32(byte)
                byteCount += 1
            }
            // 43 characters carry 32 bytes and 2 bits, which decodeCanonically has checked are zero.
            guard canonical, byteCount == 32 else { return nil }
            return SHA256Words(
                w0: words[0],
                w1: words[1],
                w2: words[2],
                w3: words[3],
                w4: words[4],
                w5: words[5],
                w6: words[6],
                w7: words[7]
            )
        }
    }

    /// Decodes unpadded base64url, refusing anything but the canonical encoding.
    ///
    /// A length that no byte count encodes to, a character outside the alphabet, padding, or non-zero
    /// bits in the unused low bits of the last character all yield `nil`, so every byte string has
    /// exactly one accepted encoding.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(characters.count * 3 / 4)
        guard decodeCanonically(characters, { output.append($0) }) else { return nil }
        return output
    }

    /// Hands each decoded byte of `characters` to `body`; returns `false` at a character outside the
    /// alphabet, or when the bits left over at the end are not zero — which would let two encodings
    /// decode to the same bytes.
    @inline(__always)
    private static func decodeCanonically(
        _ characters: some Sequence<UInt8>,
        _ body: (UInt8) -> Void
    ) -> Bool {
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            guard let value = value(of: character) else { return false }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                body(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return accumulator == 0
    }
}
