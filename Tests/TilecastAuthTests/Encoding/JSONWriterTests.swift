// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import TilecastAuth

struct JSONWriterTests {
    /// The capacity bound holds for the worst a string can be — every byte a control character, six bytes
    /// escaped — and for the longest integers; the output is the JSON a decoder reads back.
    @Test("A document at its capacity bound: worst-case escapes and integers fit, and decode back")
    func worstCaseFits() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let text = controls + "\"\\" + "é😀"
        let body = JSONWriter.document(capacity: 64 + 2 * JSONWriter.escapedCapacity(text)) { json in
            json.raw("{")
            json.member("a", text, first: true)
            json.member("b", text)
            json.raw(",")
            json.name("min")
            json.integer(Int.min)
            json.raw(",")
            json.name("max")
            json.integer(Int.max)
            json.raw(",")
            json.name("zero")
            json.integer(0)
            json.raw(",")
            json.name("flag")
            json.bool(false)
            json.raw("}")
        }
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(decoded["a"] as? String == text)
        #expect(decoded["b"] as? String == text)
        #expect((decoded["min"] as? NSNumber)?.int64Value == Int64.min)
        #expect((decoded["max"] as? NSNumber)?.int64Value == Int64.max)
        #expect((decoded["zero"] as? NSNumber)?.intValue == 0)
        #expect(decoded["flag"] as? Bool == false)
    }

    /// The endpoint's two shapes stay within the fixed allowances they are given, with the longest values
    /// they can hold.
    @Test("Responses with the longest expires_in and a refusal's longest description are complete JSON")
    func responsesFit() throws {
        let token = OpaqueToken.mint(.accessToken, using: SystemRandomSource())
        let refresh = OpaqueToken.mint(.refreshToken, using: SystemRandomSource())
        let credential = IssuedCredential(
            accessToken: token,
            expiresIn: Int.min,
            refreshToken: refresh,
            scope: Scope("tiles:read profile")!
        )
        let success = EndpointResponse(.success(credential: credential, cookie: nil))
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(success.body)) as? [String: Any])
        let data = try #require(decoded["data"] as? [String: Any])
        let member = try #require(data["credential"] as? [String: Any])
        #expect((member["expires_in"] as? NSNumber)?.int64Value == Int64.min)
        #expect(member["access_token"] as? String == token.unredactedValue)
        for reason in [RefusalReason.rateLimited(retryAfterSeconds: Int.max), .bodyTooLarge(limit: Int.max)] {
            let refused = EndpointResponse(.refused(EndpointError(reason)))
            #expect(try JSONSerialization.jsonObject(with: Data(refused.body)) is [String: Any])
        }
    }

    /// A scope is written without escaping: every character RFC 6749 §3.3 allows in one is one JSON takes
    /// as it is, so the body decodes back to the scope exactly — `token_type` beside it.
    @Test("A scope of every character a scope may hold is written so that it decodes back exactly")
    func everyScopeCharacter() throws {
        let allowed = [0x21] + Array(0x23...0x5B) + Array(0x5D...0x7E)
        let text = String(decoding: allowed.map { UInt8($0) }, as: UTF8.self) + " last"
        let credential = IssuedCredential(
            accessToken: OpaqueToken.mint(.accessToken, using: SystemRandomSource()),
            expiresIn: 60,
            refreshToken: OpaqueToken.mint(.refreshToken, using: SystemRandomSource()),
            scope: try #require(Scope(text))
        )
        let body = EndpointResponse(.success(credential: credential, cookie: nil)).body
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let member = try #require((decoded["data"] as? [String: Any])?["credential"] as? [String: Any])
        #expect(member["scope"] as? String == text)
        #expect(member["token_type"] as? String == "Bearer")
        #expect(Set(member.keys) == ["token_type", "access_token", "expires_in", "refresh_token", "scope"])
    }

    /// A response that adds fields makes the three standard ones itself; one that adds none shares them.
    /// Either way the three come first, in their order, and what the response adds follows.
    @Test("Every response carries Content-Type, Cache-Control and Pragma first, then its own fields")
    func headerFieldsInOrder() {
        let standard = [
            HeaderField(name: "Content-Type", value: "application/json"),
            HeaderField(name: "Cache-Control", value: "no-store"),
            HeaderField(name: "Pragma", value: "no-cache"),
        ]
        let credential = IssuedCredential(
            accessToken: OpaqueToken.mint(.accessToken, using: SystemRandomSource()),
            expiresIn: 3600,
            refreshToken: OpaqueToken.mint(.refreshToken, using: SystemRandomSource()),
            scope: Scope("tiles:read profile")!
        )
        let cookie = SessionCookie(
            session: OpaqueToken.mint(.studioSession, using: SystemRandomSource()),
            maxAge: 600,
            configuration: SessionCookieConfiguration()
        )
        let withoutCookie = EndpointResponse(.success(credential: credential, cookie: nil))
        #expect(withoutCookie.headers.fields == standard)
        let withCookie = EndpointResponse(.success(credential: credential, cookie: cookie))
        #expect(withCookie.headers.fields == standard + [HeaderField(name: "Set-Cookie", value: cookie.headerValue)])
        let notAllowed = EndpointResponse(.refused(EndpointError(.methodNotAllowed)))
        #expect(notAllowed.headers.fields == standard + [HeaderField(name: "Allow", value: "POST")])
        let limited = EndpointResponse(.refused(EndpointError(.rateLimited(retryAfterSeconds: 7))))
        #expect(limited.headers.fields == standard + [HeaderField(name: "Retry-After", value: "7")])
        let refused = EndpointResponse(.refused(EndpointError(.codeNotFound)))
        #expect(refused.headers.fields == standard)
    }
}
