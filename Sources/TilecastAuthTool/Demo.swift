// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// `tilecast-auth demo`: one user through the whole lifecycle, against the in-memory store, with every
/// HTTP exchange printed. It doubles as a smoke test: it exits non-zero if any step does not behave as
/// the endpoint's contract says.
struct Demo: Subcommand {
    static let usage = """
        usage: tilecast-auth demo

        Walks one user through the whole lifecycle against the in-memory store and prints every HTTP
        exchange, with secrets shortened. Exits non-zero if a step does not behave as specified.
        """
    private static let path = "/api/v1/oauth/ios-session"
    private static let account: AccountID = "demo-account"
    private static let callback = "tilecast-ios://oauth/callback"

    private var transcript = Transcript()

    init(arguments: [String]) throws(UsageError) {
        try Self.requireNoArguments(arguments)
    }

    mutating func run() async -> Bool {
        do {
            try await walkthrough()
        } catch {
            transcript.check(false, "unexpected error: \(error)")
        }
        print(
            transcript.failures.isEmpty
                ? "\nAll steps behaved as specified." : "\n\(transcript.failures.count) step(s) failed."
        )
        return transcript.failures.isEmpty
    }

    private mutating func walkthrough() async throws {
        let store = InMemoryGrantStore(clients: [
            Client(id: .tilecastIOS, redirectURIs: [Self.callback], allowedScopeTokens: ["tiles:read", "profile"]),
            Client(
                id: "tilecast-web",
                redirectURIs: ["https://studio.tilecast.test/oauth/callback"],
                allowedScopeTokens: ["tiles:read", "profile"]
            ),
            Client(id: "tilecast-cli", redirectURIs: ["http://127.0.0.1/callback"], allowedScopeTokens: ["tiles:read"]),
        ])
        let accounts = InMemoryAccountDirectory(activeAccounts: [Self.account])
        let engine = try AuthEngine(store: store, accounts: accounts)

        transcript.step("1. Sign-in: the authorize step issues a code for a fresh PKCE pair; the app exchanges it")
        let firstSignIn = try await signIn(engine, scope: "tiles:read profile")
        transcript.check(firstSignIn.status == 200, "200, authenticated: true, one Set-Cookie")
        let firstCookie = try sessionID(firstSignIn)
        let firstRefresh = try member("refresh_token", of: firstSignIn)
        transcript.check(
            try await authenticates(engine, cookie: firstCookie),
            "the cookie authenticates Studio as \(Self.account)"
        )

        transcript.step("2. Refresh without studio_session: the token rotates, no cookie")
        let plain = await post(
            engine,
            ["grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": firstRefresh]
        )
        transcript.check(
            plain.status == 200 && plain.headers["Set-Cookie"] == nil,
            "200, authenticated: false, no Set-Cookie"
        )
        let secondRefresh = try member("refresh_token", of: plain)

        transcript.step("3. Refresh with studio_session: true — a new session replaces the earlier one")
        let withSession = await post(
            engine,
            [
                "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": secondRefresh,
                "studio_session": true,
            ]
        )
        transcript.check(
            withSession.status == 200 && withSession.headers["Set-Cookie"] != nil,
            "200, authenticated: true, new Set-Cookie"
        )
        let secondCookie = try sessionID(withSession)
        let thirdAccess = try member("access_token", of: withSession)
        transcript.check(
            try await !authenticates(engine, cookie: firstCookie),
            "the earlier cookie no longer authenticates"
        )
        transcript.check(try await authenticates(engine, cookie: secondCookie), "the new cookie authenticates")

        transcript.step("4. The old refresh token comes back: refused, and the whole grant is revoked")
        let replay = await post(
            engine,
            ["grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": firstRefresh]
        )
        transcript.check(replay.status == 400, "400 invalid_grant")
        transcript.check(
            try await !authenticates(engine, cookie: secondCookie),
            "the current cookie no longer authenticates"
        )
        let bearer = try await engine.authenticateBearer(authorization: "Bearer \(thirdAccess)")
        transcript.check(bearer == .unauthenticated(.revoked), "the current access token no longer authenticates")

        transcript.step("5. The user signs in again, then signs out of Studio: the grant is revoked")
        let again = try await signIn(engine, scope: "tiles:read")
        let cookie = try sessionID(again)
        let refresh = try member("refresh_token", of: again)
        let signOut = try await engine.signOut(sessionCookieValue: cookie)
        transcript.note(
            "POST /studio/sign-out → \(signOut); the response sets \(SessionCookie.deletion(configuration: engine.configuration.cookie).headerValue)"
        )
        let afterSignOut = await post(
            engine,
            ["grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": refresh]
        )
        transcript.check(afterSignOut.status == 400, "the signed-out grant's refresh token is refused")
        transcript.check(
            try await !authenticates(engine, cookie: cookie),
            "the signed-out cookie no longer authenticates"
        )
    }

    // MARK: Helpers

    /// The authorize step (a code for a fresh PKCE pair) and the code exchange.
    private mutating func signIn(_ engine: AuthEngine, scope: String) async throws -> EndpointResponse {
        let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
        transcript.extraSecrets.append(verifier)
        let challenge = CodeChallenge.s256(for: verifier)
        let issued = try await engine.issueCode(
            account: Self.account,
            client: .tilecastIOS,
            redirectURI: Self.callback,
            codeChallenge: challenge.value,
            codeChallengeMethod: "S256",
            scope: scope
        )
        transcript.note("authorize: code_challenge=\(challenge.value), code_challenge_method=S256, scope=\(scope)")
        transcript.note("redirect: \(Self.callback)?code=\(transcript.shorten(issued.code.unredactedValue))&state=…")
        return await post(
            engine,
            [
                "grant_type": "authorization_code", "client_id": "tilecast-ios", "code": issued.code.unredactedValue,
                "redirect_uri": Self.callback, "code_verifier": verifier,
            ]
        )
    }

    private func post(_ engine: AuthEngine, _ members: [String: Any]) async -> EndpointResponse {
        let request = EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json"],
            body: Array(JSONText.object(members).utf8),
            peerAddress: "127.0.0.1"
        )
        let response = await engine.handle(request: request)
        transcript.exchange(request, path: Self.path, response)
        return response
    }

    private func authenticates(_ engine: AuthEngine, cookie: String) async throws -> Bool {
        if case .authenticated = try await engine.authenticateSession(cookieValue: cookie) { return true }
        return false
    }

    private func sessionID(_ response: EndpointResponse) throws -> String {
        guard let header = response.headers["Set-Cookie"], let pair = header.split(separator: ";").first,
            let equals = pair.firstIndex(of: "=")
        else { throw DemoError("no Set-Cookie in the response") }
        return String(pair[pair.index(after: equals)...])
    }

    private func member(_ name: String, of response: EndpointResponse) throws -> String {
        let body = String(decoding: response.body, as: UTF8.self)
        guard let range = body.firstRange(of: "\"\(name)\":\"") else { throw DemoError("no \(name) in the response") }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }
}
