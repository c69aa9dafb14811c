// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct Base64URLTests {
    /// RFC 4648 §10 test vectors, in the URL-safe alphabet and without padding.
    @Test(
        "RFC 4648 vectors",
        arguments: [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
    )
    func vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test("The URL-safe alphabet replaces + and / with - and _")
    func urlSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test("Every byte string round-trips", arguments: 0..<70)
    func roundTrip(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
    }

    @Test(
        "Non-canonical and foreign input is refused",
        arguments: ["Zh", "Zm9=", "Zm9v=", "Z", "Zm+v", "Zm/v", "Zm9 v", "Zm9vY"]
    )
    func refusesNonCanonical(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("A digest's canonical 43-character encoding decodes to the same words as the general decoder")
    func digestDecoding() {
        for seed in 0..<64 {
            let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ seed &* 29) }
            let text = Base64URL.encode(bytes)
            let words = Base64URL.decodeDigest(text)
            #expect(words?.bytes == bytes)
        }
    }

    @Test(
        "A digest decoder refuses every other length, alphabet and non-zero trailing bits",
        arguments: [
            "", "AAAA", String(repeating: "A", count: 42), String(repeating: "A", count: 44),
            String(repeating: "A", count: 42) + "B",  // the last character's low 2 bits must be zero
            String(repeating: "A", count: 42) + "=", String(repeating: "A", count: 41) + "+A",
            String(repeating: "A", count: 41) + "/A", String(repeating: "A", count: 41) + "é",
        ]
    )
    func digestDecodingRefuses(text: String) {
        #expect(Base64URL.decodeDigest(text) == nil)
    }
    /// The encoder of a minted secret's 32 bytes on SSSE3 (`CTilecastBase64`) must write exactly what the
    /// portable encoder writes: on random bytes, on every byte value at every position and on every single
    /// bit set, so that each of its 43 characters, every value of every character and both ends of the
    /// alphabet's runs are checked; and nothing past the 43rd character is written (found by review: a
    /// 16-byte store of the last characters would have passed). On a processor without SSSE3 — an x86-64
    /// one emulated as QEMU's default model, say — there is only one encoder, and the test is skipped
    /// rather than passed.
    @Test(
        "A secret's 32 bytes encode on vector instructions exactly as on the portable encoder",
        .enabled(if: Base64URL.encodesSecretsInVectors, "this processor has no SSSE3")
    )
    func vectorEncoderAgreesWithPortable() {
        var inputs: [[UInt8]] = [Array(repeating: 0, count: 32), Array(repeating: 0xFF, count: 32)]
        for position in 0..<32 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: 0xA5, count: 32)
                bytes[position] = UInt8(value)
                inputs.append(bytes)
            }
            for bit in 0..<8 {
                var bytes = [UInt8](repeating: 0, count: 32)
                bytes[position] = 1 << bit
                inputs.append(bytes)
            }
        }
        var generator = SplitMix(state: 0x6261_7365_3634)
        for _ in 0..<20_000 {
            inputs.append((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        var disagreements = 0
        var writesPastTheEnd = 0
        for bytes in inputs {
            // Guard bytes after the 43 the encoder is given.
            var vector = [UInt8](repeating: 0xEE, count: 64)
            var portable = [UInt8](repeating: 0, count: 43)
            bytes.withUnsafeBytes { input in
                vector.withUnsafeMutableBufferPointer {
                    Base64URL.encode(input, into: UnsafeMutableBufferPointer(rebasing: $0[0..<43]))
                }
                portable.withUnsafeMutableBufferPointer { Base64URL.encodePortably(input, into: $0) }
            }
            if Array(vector[0..<43]) != portable {
                disagreements += 1
            }
            if !vector[43...].allSatisfy({ $0 == 0xEE }) {
                writesPastTheEnd += 1
            }
        }
        #expect(disagreements == 0)
        #expect(writesPastTheEnd == 0)
        #expect(inputs.count > 28_000)
        // RFC 7636 Appendix B's verifier, the base64url of its 32 octets.
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214,
            191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ]
        #expect(Base64URL.encode(octets) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    }
}
