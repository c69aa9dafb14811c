// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rules S-2–S-5: the Studio session cookie.
struct CookieTests {
    @Test("By default the cookie is __Host-, Secure, HttpOnly, Path=/, SameSite=Lax, without Domain, with Max-Age")
    func defaults() async throws {
        let harness = try Harness()
        let response = try await harness.signIn()
        let header = try #require(response.setCookies.first)
        #expect(header.hasPrefix("__Host-tilecast_session=tcs_"))
        let attributes = response.cookieAttributes
        #expect(attributes["secure"] == "")
        #expect(attributes["httponly"] == "")
        #expect(attributes["path"] == "/")
        #expect(attributes["samesite"] == "Lax")
        #expect(attributes["domain"] == nil)
        #expect(attributes["expires"] == nil)
        let maxAgeText = try #require(attributes["max-age"])
        let maxAge = try #require(Int(maxAgeText))
        #expect(maxAge == 14 * 86_400)
        #expect(maxAge > 0 && maxAge <= 34_560_000)
        #expect(header.split(separator: ";").count == 6)
    }

    @Test("Foundation's cookie parser reads the header as the iOS app will")
    func foundationParsesIt() async throws {
        let harness = try Harness()
        let response = try await harness.signIn()
        let url = try #require(URL(string: "https://studio.tilecast.test/api/v1/oauth/ios-session"))
        let header = try #require(response.setCookies.first)
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header], for: url)
        let cookie = try #require(cookies.first)
        #expect(cookies.count == 1)
        #expect(cookie.name == "__Host-tilecast_session")
        #expect(cookie.value == response.sessionID)
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.path == "/")
        #expect(cookie.domain == "studio.tilecast.test")
        #expect(!cookie.isSessionOnly)
    }

    @Test("The cookie can match the server's normal Studio cookie")
    func configured() async throws {
        let cookie = SessionCookieConfiguration(
            name: "studio_session",
            secure: true,
            path: "/",
            domain: "tilecast.test",
            sameSite: .strict
        )
        let harness = try Harness(configuration: EngineConfiguration(cookie: cookie))
        let response = try await harness.signIn()
        #expect(response.setCookies.first?.hasPrefix("studio_session=") == true)
        #expect(response.cookieAttributes["domain"] == "tilecast.test")
        #expect(response.cookieAttributes["samesite"] == "Strict")
    }

    @Test(
        "Impossible cookie configurations are refused",
        arguments: [
            (SessionCookieConfiguration(secure: false), ConfigurationError.hostPrefixRequiresSecure),
            (SessionCookieConfiguration(name: "__host-x", secure: false), .hostPrefixRequiresSecure),
            (SessionCookieConfiguration(path: "/studio"), .hostPrefixRequiresRootPath),
            (SessionCookieConfiguration(domain: "tilecast.test"), .hostPrefixForbidsDomain),
            (SessionCookieConfiguration(name: "__Secure-x", secure: false), .securePrefixRequiresSecure),
            (SessionCookieConfiguration(name: "x", secure: false, sameSite: .none), .sameSiteNoneRequiresSecure),
            (SessionCookieConfiguration(name: ""), .invalidCookieName),
            (SessionCookieConfiguration(name: "a b"), .invalidCookieName),
            (SessionCookieConfiguration(name: "a;b"), .invalidCookieName),
            (SessionCookieConfiguration(name: "x", path: "studio"), .invalidCookiePath),
            (SessionCookieConfiguration(name: "x", path: "/a;b"), .invalidCookiePath),
            (SessionCookieConfiguration(name: "x", domain: ".tilecast.test"), .invalidCookieDomain),
            (SessionCookieConfiguration(name: "x", domain: "a;b"), .invalidCookieDomain),
        ]
    )
    func refused(configuration: SessionCookieConfiguration, error: ConfigurationError) {
        #expect(throws: error) { try configuration.validate() }
        #expect(throws: error) {
            _ = try AuthEngine(
                configuration: EngineConfiguration(cookie: configuration),
                store: InMemoryGrantStore(clients: []),
                accounts: InMemoryAccountDirectory()
            )
        }
    }

    @Test("A plain-HTTP development cookie is possible without a prefix")
    func developmentCookie() throws {
        try SessionCookieConfiguration(name: "tilecast_session_dev", secure: false).validate()
    }

    @Test("Every attribute at once, with the longest Max-Age, renders in order and in full")
    func everyAttribute() {
        let configuration = SessionCookieConfiguration(
            name: "__Secure-tilecast_session",
            path: "/studio",
            domain: "maps.example.com",
            sameSite: .strict
        )
        let session = OpaqueToken.mint(.studioSession, using: SystemRandomSource())
        let header = SessionCookie(session: session, maxAge: Int.max, configuration: configuration).headerValue
        #expect(
            header == "__Secure-tilecast_session=\(session.unredactedValue); Max-Age=\(Int.max); Path=/studio; "
                + "Domain=maps.example.com; Secure; HttpOnly; SameSite=Strict"
        )
    }

    @Test("The deletion cookie expires the cookie with the same attributes")
    func deletion() {
        let header = SessionCookie.deletion(configuration: SessionCookieConfiguration()).headerValue
        #expect(header == "__Host-tilecast_session=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax")
    }
}
