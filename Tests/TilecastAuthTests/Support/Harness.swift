// SPDX-License-Identifier: Apache-2.0

import Foundation
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

/// An engine on an in-memory store with a manual clock, a seeded random source and a recording
/// observer, and helpers that speak the endpoint's JSON.
struct Harness {
    static let account: AccountID = "account-7"
    static let callback = "tilecast-ios://oauth/callback"
    static let webCallback = "https://studio.tilecast.test/oauth/callback"
    static let scope = "tiles:read profile"

    static let clients = [
        Client(
            id: .tilecastIOS,
            redirectURIs: [callback],
            allowedScopeTokens: ["tiles:read", "tiles:write", "profile"]
        ),
        Client(id: "tilecast-web", redirectURIs: [webCallback], allowedScopeTokens: ["tiles:read", "profile"]),
        Client(id: "tilecast-cli", redirectURIs: ["http://127.0.0.1/callback"], allowedScopeTokens: ["tiles:read"]),
    ]

    let memory: InMemoryGrantStore
    let faults: FaultInjectingStore
    let accounts: InMemoryAccountDirectory
    let clock: ManualTimeSource
    let random: SeededRandomSource
    let observer: RecordingObserver
    let engine: AuthEngine

    init(
        configuration: EngineConfiguration = EngineConfiguration(),
        rateLimiter: any RateLimiter = InMemoryRateLimiter(capacity: 100_000),
        seed: UInt64 = 0x5EED,
        startsSessionsSeparately: Bool = false
    ) throws {
        memory = InMemoryGrantStore(clients: Self.clients)
        faults = FaultInjectingStore(memory, startsSessionsSeparately: startsSessionsSeparately)
        accounts = InMemoryAccountDirectory(activeAccounts: [Self.account, "account-8"])
        clock = ManualTimeSource()
        random = SeededRandomSource(seed: seed)
        observer = RecordingObserver()
        engine = try AuthEngine(
            configuration: configuration,
            store: faults,
            accounts: accounts,
            rateLimiter: rateLimiter,
            observer: observer,
            timeSource: clock,
            randomSource: random
        )
    }

    /// Another engine on the same store, clock and accounts — a second endpoint of the same server, or
    /// one serving another client.
    func engine(serving configuration: EngineConfiguration) throws -> AuthEngine {
        try AuthEngine(
            configuration: configuration,
            store: faults,
            accounts: accounts,
            rateLimiter: InMemoryRateLimiter(capacity: 100_000),
            observer: observer,
            timeSource: clock,
            randomSource: random
        )
    }

    // MARK: PKCE

    /// A fresh, well-formed verifier: 32 seeded random bytes in base64url.
    func newVerifier() -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { random.fill($0) }
        return Base64URL.encode(bytes)
    }

    // MARK: Lifecycle

    /// Issues a code through the engine, as the authorize step would, and returns its value.
    func issueCode(
        verifier: String,
        client: ClientID = .tilecastIOS,
        redirectURI: String = Harness.callback,
        scope: String = Harness.scope,
        account: AccountID = Harness.account
    ) async throws -> String {
        try await issue(verifier: verifier, client: client, redirectURI: redirectURI, scope: scope, account: account)
            .code.unredactedValue
    }

    /// Issues a code through the engine, as the authorize step would, and returns what the engine did.
    func issue(
        verifier: String,
        client: ClientID = .tilecastIOS,
        redirectURI: String = Harness.callback,
        scope: String = Harness.scope,
        account: AccountID = Harness.account,
        authenticatedAt: Date? = nil
    ) async throws -> IssuedCode {
        try await engine.issueCode(
            account: account,
            client: client,
            redirectURI: redirectURI,
            codeChallenge: PKCE.s256Challenge(for: verifier),
            codeChallengeMethod: "S256",
            scope: scope,
            authenticatedAt: authenticatedAt
        )
    }

    /// Writes a code straight to the store, past `issueCode`'s checks — for codes it would refuse to issue.
    func insertCode(
        challenge: CodeChallenge?,
        redirectURI: String = Harness.callback,
        into store: InMemoryGrantStore? = nil
    ) async throws -> OpaqueToken {
        let code = OpaqueToken.mint(.authorizationCode, using: random)
        let now = clock.now()
        try await (store ?? memory).insertCode(
            AuthorizationCode(
                digest: code.digest,
                client: .tilecastIOS,
                account: Harness.account,
                redirectURI: redirectURI,
                scope: Scope("profile")!,
                challenge: challenge,
                issuedAt: now,
                expiresAt: now.addingTimeInterval(60)
            )
        )
        return code
    }

    /// Issues a code and exchanges it; returns the successful response.
    func signIn(account: AccountID = Harness.account) async throws -> TestResponse {
        let verifier = newVerifier()
        let code = try await issueCode(verifier: verifier, account: account)
        return await exchange(code: code, verifier: verifier)
    }

    // MARK: Requests

    func exchange(
        code: String,
        verifier: String,
        redirectURI: String = Harness.callback,
        clientID: String = "tilecast-ios",
        extra: [String: Any] = [:],
        on engine: AuthEngine? = nil
    ) async -> TestResponse {
        var body: [String: Any] = [
            "grant_type": "authorization_code",
            "client_id": clientID,
            "code": code,
            "redirect_uri": redirectURI,
            "code_verifier": verifier,
        ]
        body.merge(extra) { _, new in new }
        return await post(json: body, on: engine)
    }

    func refresh(
        _ token: String,
        studioSession: Bool? = nil,
        clientID: String = "tilecast-ios",
        on engine: AuthEngine? = nil
    ) async -> TestResponse {
        var body: [String: Any] = ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": token]
        if let studioSession {
            body["studio_session"] = studioSession
        }
        return await post(json: body, on: engine)
    }

    func post(json: [String: Any], on engine: AuthEngine? = nil) async -> TestResponse {
        let data = try! JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        return await post(body: Array(data), on: engine)
    }

    func post(
        body: [UInt8],
        method: String = "POST",
        headers: HeaderFields = ["Content-Type": "application/json"],
        peer: String? = "192.0.2.10",
        on engine: AuthEngine? = nil
    ) async -> TestResponse {
        let request = EndpointRequest(method: method, headers: headers, body: body, peerAddress: peer)
        return TestResponse(response: await (engine ?? self.engine).handle(request: request))
    }

    func post(text: String, headers: HeaderFields = ["Content-Type": "application/json"]) async -> TestResponse {
        await post(body: Array(text.utf8), headers: headers)
    }

    // MARK: Authentication

    func sessionAuthenticates(_ sessionID: String?) async throws -> Bool {
        guard let sessionID else { return false }
        if case .authenticated = try await engine.authenticateSession(cookieValue: sessionID) { return true }
        return false
    }

    func bearerAuthenticates(_ accessToken: String?) async throws -> Bool {
        guard let accessToken else { return false }
        if case .authenticated = try await engine.authenticateBearer(authorization: "Bearer \(accessToken)") {
            return true
        }
        return false
    }
}
