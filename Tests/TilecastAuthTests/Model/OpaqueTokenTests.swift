// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

struct OpaqueTokenTests {
    @Test(
        "Minted secrets are the kind's prefix and 43 base64url characters from one random read",
        arguments: SecretKind.allCases
    )
    func mintedShape(kind: SecretKind) {
        let random = SeededRandomSource()
        let token = OpaqueToken.mint(kind, using: random)
        #expect(random.fillCount == 1)
        #expect(token.unredactedValue.count == 47)
        #expect(token.unredactedValue.hasPrefix(kind.prefix))
        #expect(token.unredactedValue.dropFirst(4).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(token.digest == SecretDigest(of: token.unredactedValue))
        #expect(OpaqueToken(presented: token.unredactedValue, as: kind)?.digest == token.digest)
        // The value is kept in the token itself and read out whole, the same on every read.
        #expect(OpaqueToken(presented: token.unredactedValue, as: kind)?.unredactedValue == token.unredactedValue)
        #expect(token.withUnredactedBytes { Array($0) } == Array(token.unredactedValue.utf8))
    }

    /// Fills a buffer with 0, 1, 2, …: a source whose secrets are known in advance.
    private struct CountingRandomSource: RandomSource {
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            for index in buffer.indices {
                buffer[index] = UInt8(truncatingIfNeeded: index)
            }
        }
    }

    @Test("A minted secret, its digest, its JSON member and its cookie are the text the random bytes give")
    func mintedText() {
        // Bytes 0 to 31 in base64url (RFC 4648 §5), without padding.
        let expected = "tcr_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
        let token = OpaqueToken.mint(.refreshToken, using: CountingRandomSource())
        #expect(token.unredactedValue == expected)
        #expect(token.withUnredactedBytes { $0.count } == SecretKind.encodedLength)
        #expect(token.digest == SecretDigest(of: expected))
        let presented = OpaqueToken(presented: expected, as: .refreshToken)
        #expect(presented?.unredactedValue == expected)
        #expect(presented?.digest == SecretDigest(of: expected))

        let session = OpaqueToken.mint(.studioSession, using: CountingRandomSource())
        let cookie = SessionCookie(session: session, maxAge: 60, configuration: SessionCookieConfiguration())
        #expect(
            cookie.headerValue
                == "__Host-tilecast_session=tcs_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8; Max-Age=60; Path=/; "
                + "Secure; HttpOnly; SameSite=Lax"
        )
        let body = JSONWriter.document(capacity: 128) { $0.member("refresh_token", token: token) }
        #expect(String(decoding: body, as: UTF8.self).contains(#""refresh_token":"\#(expected)""#))
    }

    @Test("Distinct mints are distinct")
    func distinct() {
        let random = SystemRandomSource()
        let values = Set((0..<1000).map { _ in OpaqueToken.mint(.refreshToken, using: random).unredactedValue })
        #expect(values.count == 1000)
    }

    @Test("A value of another kind, length or alphabet is not accepted")
    func presentedShape() {
        let token = OpaqueToken.mint(.refreshToken, using: SeededRandomSource()).unredactedValue
        #expect(OpaqueToken(presented: token, as: .accessToken) == nil)
        #expect(OpaqueToken(presented: String(token.dropLast()), as: .refreshToken) == nil)
        #expect(OpaqueToken(presented: token + "A", as: .refreshToken) == nil)
        #expect(OpaqueToken(presented: String(token.dropLast()) + "+", as: .refreshToken) == nil)
        #expect(OpaqueToken(presented: "example", as: .refreshToken) == nil)
    }

    @Test("No description, debug description or mirror shows the value")
    func redaction() {
        let token = OpaqueToken.mint(.studioSession, using: SeededRandomSource())
        let secret = String(token.unredactedValue.dropFirst(4))
        var dumped = ""
        dump(token, to: &dumped)
        for text in [String(describing: token), String(reflecting: token), "\(token)", dumped] {
            #expect(!text.contains(secret))
            #expect(text.contains("tcs_"))
        }
        let cookie = SessionCookie(session: token, maxAge: 60, configuration: SessionCookieConfiguration())
        var dumpedCookie = ""
        dump(cookie, to: &dumpedCookie)
        for text in [String(describing: cookie), String(reflecting: cookie), dumpedCookie] {
            #expect(!text.contains(secret))
        }
        #expect(cookie.headerValue.contains(secret))
    }

    @Test("A digest prints only its first four bytes")
    func digestDescription() {
        let digest = SecretDigest(of: "x")
        #expect(String(describing: digest).count < 30)
        #expect(digest.hexadecimal.count == 64)
        #expect(SecretDigest(bytes: digest.bytes) == digest)
        #expect(SecretDigest(bytes: [1, 2, 3]) == nil)
    }
}
