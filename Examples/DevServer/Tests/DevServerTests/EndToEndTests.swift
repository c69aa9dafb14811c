// SPDX-License-Identifier: Apache-2.0

import DevServerKit
import Foundation
import Testing
import TilecastAuth

/// The dev server end to end, through a real HTTP client on a loopback port: what the iOS app and a
/// browser do, request by request.
struct EndToEndTests {
    static let databaseURL = ProcessInfo.processInfo.environment["TILECAST_DATABASE_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }
    static let stores: [DevServerConfiguration.Store] =
        [.memory] + (databaseURL.map { [.postgres(databaseURL: $0)] } ?? [])

    @Test(
        "Authorize, approve, exchange, Studio, refresh with a session, sign out — then every credential fails",
        arguments: stores
    )
    func wholeFlow(store: DevServerConfiguration.Store) async throws {
        let client = try await DevServerClient(store: store)
        let (verifier, challenge) = DevServerClient.pkce()

        let code = try await client.authorize(challenge: challenge)
        let exchange = try await client.exchange(code: code, verifier: verifier)
        #expect(exchange.status == 200)
        let cookie = try #require(exchange.sessionCookie)
        let setCookie = try #require(exchange.header("Set-Cookie"))
        #expect(setCookie.contains("HttpOnly") && setCookie.hasPrefix("tilecast_session="))
        let accessToken = try #require(exchange.accessToken)
        let refreshToken = try #require(exchange.refreshToken)

        #expect(try await client.studio(cookie: cookie).text.contains("Signed in as <strong>Ada Lovelace</strong>"))
        let me = try await client.me(accessToken: accessToken)
        #expect(me.status == 200)
        #expect(me.json["account"] as? String == "ada@tilecast.test")

        let refreshed = try await client.refresh(refreshToken, studioSession: true)
        #expect(refreshed.status == 200)
        let newCookie = try #require(refreshed.sessionCookie)
        let newAccessToken = try #require(refreshed.accessToken)
        let newRefreshToken = try #require(refreshed.refreshToken)
        #expect(newCookie != cookie)
        // The refresh replaced the grant's session: the first cookie no longer signs in.
        #expect(try await client.studio(cookie: cookie).text.contains("No session"))
        #expect(try await client.studio(cookie: newCookie).text.contains("Ada Lovelace"))

        let studioPage = try await client.studio(cookie: newCookie)
        let signOut = try await client.postForm(
            "/studio/sign-out",
            DevServerClient.hiddenFields(of: studioPage, action: "/studio/sign-out"),
            cookie: newCookie
        )
        #expect(signOut.status == 303)
        #expect(signOut.header("Set-Cookie")?.contains("Max-Age=0") == true)

        // Signing the session out revoked the grant: nothing of it works any more.
        let refreshAfter = try await client.refresh(newRefreshToken, studioSession: false)
        #expect(refreshAfter.status == 400)
        #expect(refreshAfter.json["error"] as? String == "invalid_grant")
        #expect(try await client.me(accessToken: newAccessToken).status == 401)
        #expect(try await client.me(accessToken: accessToken).status == 401)
        #expect(try await client.studio(cookie: newCookie).text.contains("No session"))
    }

    @Test("The specification's example request, sent as-is, gets a 400 JSON error")
    func specificationExample() async throws {
        let client = try await DevServerClient()
        let body =
            #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"example","redirect_uri":"https://example.com","code_verifier":"example","refresh_token":"example","studio_session":false}"#
        let response = try await client.send(
            "POST",
            "/api/v1/oauth/ios-session",
            body: Data(body.utf8),
            headers: ["Content-Type": "application/json"]
        )
        #expect(response.status == 400)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.json["error"] as? String != nil)
        #expect(response.header("Set-Cookie") == nil)
    }

    @Test("A burst of concurrent exchanges of one code: exactly one 200")
    func concurrentExchanges() async throws {
        let client = try await DevServerClient()
        let (verifier, challenge) = DevServerClient.pkce()
        let code = try await client.authorize(challenge: challenge)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await client.exchange(code: code, verifier: verifier).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1, "statuses: \(statuses)")
        #expect(statuses.filter { $0 == 400 }.count == 19, "statuses: \(statuses)")
    }

    @Test("Authorize errors: an unknown client or redirect URI gets a page; the rest redirect with error and state")
    func authorizeErrors() async throws {
        let client = try await DevServerClient()
        let (_, challenge) = DevServerClient.pkce()
        let good = DevServerClient.authorizeParameters(challenge: challenge)
        func replacing(_ name: String, with value: String?) -> [(String, String)] {
            good.compactMap { $0.0 == name ? value.map { (name, $0) } : $0 }
        }

        for parameters in [
            replacing("client_id", with: "evil-app"), replacing("redirect_uri", with: "https://evil.test/cb"),
        ] {
            let response = try await client.send("GET", "/oauth/authorize" + DevServerClient.query(parameters))
            #expect(response.status == 400)
            #expect(response.header("Location") == nil)
        }
        for (parameters, error) in [
            (replacing("code_challenge", with: nil), "invalid_request"),
            (replacing("code_challenge_method", with: "plain"), "invalid_request"),
            (replacing("code_challenge_method", with: nil), "invalid_request"),
            (replacing("response_type", with: "token"), "unsupported_response_type"),
            (replacing("scope", with: "admin"), "invalid_scope"),
        ] {
            let response = try await client.send("GET", "/oauth/authorize" + DevServerClient.query(parameters))
            #expect(response.status == 302)
            #expect(response.redirectQuery["error"] == error)
            #expect(response.redirectQuery["error_description"]?.isEmpty == false)
            #expect(response.redirectQuery["state"] == "state-42")
            #expect(response.header("Location")?.hasPrefix("tilecast-ios://oauth/callback?") == true)
        }
        let denied = try await client.submitAuthorize(good, [("decision", "deny")])
        #expect(denied.redirectQuery["error"] == "access_denied")
    }

    @Test("Revoking the grant on the account page ends its Studio session")
    func revokingEndsTheSession() async throws {
        let client = try await DevServerClient()
        let (verifier, challenge) = DevServerClient.pkce()
        let code = try await client.authorize(challenge: challenge, account: "grace@tilecast.test")
        let cookie = try #require(try await client.exchange(code: code, verifier: verifier).sessionCookie)
        #expect(try await client.studio(cookie: cookie).text.contains("Grace Hopper"))

        let grants = try await client.server.engine.grants(of: "grace@tilecast.test")
        let grant = try #require(grants.first)
        let page = try await client.send("GET", "/account?account=grace%40tilecast.test")
        #expect(page.text.contains(grant.id.description) && page.text.contains(">live<"))

        let revoked = try await client.postForm(
            "/account/revoke",
            DevServerClient.hiddenFields(of: page, action: "/account/revoke")
        )
        #expect(revoked.status == 303)
        #expect(try await client.studio(cookie: cookie).text.contains("No session"))
        #expect(try await client.send("GET", "/account?account=grace%40tilecast.test").text.contains("revoked"))
    }

    @Test("The authorization response carries a state full of URL syntax back intact, and iss (RFC 9207)")
    func stateRoundTrip() async throws {
        let client = try await DevServerClient()
        let (_, challenge) = DevServerClient.pkce()
        let state = "a&code=forged#x y+%41/é"
        let approval = try await client.submitAuthorize(
            DevServerClient.authorizeParameters(challenge: challenge, state: state),
            [("account", "ada@tilecast.test"), ("decision", "approve")]
        )
        #expect(approval.status == 302)
        #expect(approval.redirectQuery["state"] == state)
        #expect(approval.redirectQuery["iss"] == client.server.baseURL)
        #expect(approval.redirectQuery["code"]?.hasPrefix("tcc_") == true)
        let denial = try await client.submitAuthorize(
            DevServerClient.authorizeParameters(challenge: challenge, state: state),
            [("decision", "deny")]
        )
        #expect(denial.redirectQuery["error"] == "access_denied")
        #expect(denial.redirectQuery["state"] == state)
    }

    @Test("Bearer-less and unknown routes: 401 with WWW-Authenticate, 404")
    func unauthenticated() async throws {
        let client = try await DevServerClient()
        let me = try await client.send("GET", "/api/v1/me")
        #expect(me.status == 401)
        #expect(me.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(try await client.send("GET", "/nowhere").status == 404)
    }
}
