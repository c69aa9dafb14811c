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
}
