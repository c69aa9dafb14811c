// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

/// The byte-level readers that replaced `String` and `Substring` processing on the request path, checked
/// against what the slower code they replaced answered.
struct ByteLevelParsingTests {
    @Test("Byte equality is exact: no case folding, no canonical equivalence")
    func asciiEquality() {
        #expect(ASCII.equal("tilecast-ios", "tilecast-ios"))
        #expect(ASCII.equal("", ""))
        #expect(!ASCII.equal("tilecast-ios", "Tilecast-ios"))
        #expect(!ASCII.equal("tilecast-ios", "tilecast-io"))
        #expect(!ASCII.equal("\u{E9}", "e\u{301}"))  // equal as Swift Strings, different bytes
        #expect(ASCII.equalIgnoringCase("Content-Type", "content-type"))
        #expect(!ASCII.equalIgnoringCase("Content-Type", "content-typ"))
        #expect(!ASCII.equalIgnoringCase("[", "{"))  // 0x5B and 0x7B differ by the case bit but are not letters
        #expect(ASCII.hasPrefixIgnoringCase("__HOST-tilecast_session", "__Host-"))
        #expect(!ASCII.hasPrefixIgnoringCase("__Hos", "__Host-"))
    }

    @Test(
        "Content-Type: application/json with an optional UTF-8 charset, in any case and spacing",
        arguments: [
            ("application/json", true), ("Application/JSON", true), (" application/json ", true),
            ("application/json; charset=utf-8", true), ("application/json;charset=UTF8", true),
            ("application/json; charset=\"utf-8\"", true), ("application/json; foo=bar; charset=utf-8", true),
            ("application/json; charset=latin1", false), ("application/jsonx", false), ("text/json", false),
            ("application/json, text/plain", false), ("", false), ("application/json; charset=", false),
            // A quoted parameter value may hold ";" and "=" (RFC 9110 §5.6.4): it is one parameter.
            ("application/json; foo=\"a;charset=utf-16\"", true),
            ("application/json; foo=\"a;b\"; charset=utf-8", true),
            ("application/json; foo=\"a\\\"b;charset=utf-16\"", true),
            ("application/json; foo=\"a;b\"; charset=utf-16", false),
            ("application/json; charset=\"UTF-8\"", true), ("application/json; charset=\"utf\\-8\"", true),
            ("application/json;;", true), ("application/json; ; charset=utf-8", true),
            ("application/json; foo=\"unterminated", false), ("application/json; =x", false),
            ("application/json; foo", false), ("application/json; foo=", false),
        ]
    )
    func mediaType(value: String, isJSON: Bool) {
        #expect(MediaType.isJSON(value) == isJSON)
    }

    @Test("Cookie values are found by exact name across fields, trimmed and unquoted")
    func cookieValues() {
        let name = "__Host-tilecast_session"
        #expect(CookieHeader.values(named: name, in: ["theme=dark; __Host-tilecast_session=abc"]) == ["abc"])
        #expect(CookieHeader.values(named: name, in: ["__Host-tilecast_session=\"abc\""]) == ["abc"])
        #expect(CookieHeader.values(named: name, in: [" \t__Host-tilecast_session=a=b ;"]) == ["a=b"])
        #expect(CookieHeader.values(named: name, in: ["__host-tilecast_session=abc"]).isEmpty)
        #expect(
            CookieHeader.values(named: name, in: ["x=1", "__Host-tilecast_session=1; __Host-tilecast_session=2"]) == [
                "1", "2",
            ]
        )
        #expect(CookieHeader.values(named: name, in: [";;", "", "__Host-tilecast_session", "=abc"]).isEmpty)
        #expect(CookieHeader.values(named: name, in: ["__Host-tilecast_session="]) == [""])
        #expect(CookieHeader.values(named: name, in: ["__Host-tilecast_session=\""]) == ["\""])
    }

    @Test("JSON texts compare by bytes with strings and literals")
    func jsonText() throws {
        let members = try JSONObjectParser.parse(Array(#"{"grant_type":"refresh_token","x":"caf\u00e9"}"#.utf8))
        #expect(members[0].name.equals("grant_type"))
        #expect(members[0].name.equals("grant_type" as String))
        guard case .string(let grantType) = members[0].value, case .string(let escaped) = members[1].value else {
            Issue.record("expected string values")
            return
        }
        #expect(grantType.equals("refresh_token"))
        #expect(!grantType.equals("refresh_tokens"))
        #expect(escaped.string == "caf\u{E9}")
        #expect(!escaped.equals("cafe\u{301}"))
        #expect("\(grantType)" == "JSONText(13 bytes)")  // a secret's text never prints
    }

    @Test("A canonical S256 challenge is held as its digest and reads back exactly as sent")
    func codeChallengeStorage() {
        let value = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        let challenge = CodeChallenge(method: .s256, value: value)
        #expect(challenge.value == value)
        #expect(challenge.method == .s256)
        #expect(challenge.s256Digest == Base64URL.decodeDigest(value))

        let plain = CodeChallenge(method: .plain, value: value)
        #expect(plain.value == value && plain.method == .plain && plain.s256Digest == nil)
        let nonCanonical = CodeChallenge(method: .s256, value: String(value.dropLast()) + "N")
        #expect(nonCanonical.value == String(value.dropLast()) + "N" && nonCanonical.s256Digest == nil)
        #expect(nonCanonical != challenge)

        var changed = challenge
        changed.method = .plain
        #expect(changed.s256Digest == nil && changed.value == value)
        changed.method = .s256
        #expect(changed == challenge)
    }
}

struct PlainASCIISkipTests {
    /// `skipPlainASCII`'s contract on random inputs rich in the bytes it must stop at: everything it skips
    /// is printable ASCII other than a quote or a backslash, and it stops exactly at the first of the
    /// others, or after whole words where fewer than eight bytes remain before the end.
    @Test("The eight-bytes-at-a-time skip stops at every quote, backslash, control and non-ASCII byte")
    func skipContract() {
        var generator = SystemRandomNumberGenerator()
        let special: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x20, 0x7F, 0x80, 0xFF, 0x21, 0x23, 0x5B, 0x5D, 0x41]
        func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C }
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let bytes: [UInt8] = (0..<count).map { _ in
                Bool.random(using: &generator)
                    ? special.randomElement(using: &generator)! : UInt8.random(in: 0x20...0x7E, using: &generator)
            }
            let start = Int.random(in: 0...count, using: &generator)
            let end = bytes.withUnsafeBytes { JSONObjectParser.skipPlainASCII($0, from: start) }
            #expect(bytes[start..<end].allSatisfy(isPlain), "\(bytes) from \(start) to \(end)")
            let stoppedAtHit = end < count && !isPlain(bytes[end])
            let ranOut = (end - start) % 8 == 0 && count - end < 8
            #expect(stoppedAtHit || ranOut, "\(bytes) from \(start) stopped early at \(end)")
            if end + 8 <= count {
                #expect(stoppedAtHit, "\(bytes) from \(start) stopped at \(end), not at a hit")
            }
        }
    }
}

struct CaseInsensitiveComparisonTests {
    /// The byte-at-a-time definition the word arithmetic must agree with.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
    }

    @Test("A word is lowercased as its bytes are one by one: every byte value in every place, beside every other")
    func lowercaseWord() {
        for byte in UInt8.min...UInt8.max {
            for place in 0..<8 {
                for neighbour in [UInt8(0x00), 0x40, 0x41, 0x5A, 0x5B, 0x60, 0x7F, 0x80, 0xC1, 0xDA, 0xFF] {
                    var bytes = [UInt8](repeating: neighbour, count: 8)
                    bytes[place] = byte
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let expected = bytes.map(Self.lowercased).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    #expect(ASCII.lowercase(word: word) == expected, "\(byte) at \(place) beside \(neighbour)")
                }
            }
        }
    }

    @Test(
        "Runs of 1 to 17 bytes compare without case exactly as byte by byte, whatever pair differs where",
        arguments: Array(1...17)
    )
    func equalIgnoringCaseAgreesByteByByte(count: Int) {
        let base = (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        // Every byte against its case twin, a neighbour, itself, and the bytes whose only difference from
        // it is the case bit without being letters.
        for position in 0..<count {
            for byte in UInt8.min...UInt8.max {
                for other in [byte, byte ^ 0x20, byte &+ 1, byte ^ 0x80] {
                    var left = base
                    var right = base
                    left[position] = byte
                    right[position] = other
                    let expected = Self.lowercased(byte) == Self.lowercased(other)
                    let judged = left.withUnsafeBufferPointer { l in
                        right.withUnsafeBufferPointer { r in
                            ASCII.equalIgnoringCase(l.baseAddress!, r.baseAddress!, count: count)
                        }
                    }
                    if judged != expected {
                        Issue.record("\(byte) against \(other) at \(position) of \(count): \(judged)")
                    }
                }
            }
        }
    }
}
