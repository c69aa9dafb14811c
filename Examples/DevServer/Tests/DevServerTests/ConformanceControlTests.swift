// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuth
import TilecastAuthConformance

@testable import DevServerKit

/// The dev server's conformance control API, and the runner over real HTTP against it: the shipped
/// scenarios pass, the control API exists only behind its flag and its token, and a rule broken in the
/// server on purpose is found, with a diff a person can act on.
@Suite(.serialized)
struct ConformanceControlTests {
    private static let scenarios = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/Conformance/scenarios").path

    private func startServer(
        control: Bool = true,
        defects: DevServer.PlantedDefects = .init()
    ) async throws -> DevServer {
        var configuration = DevServerConfiguration()
        configuration.port = 0
        configuration.conformanceControl = control
        let server = try await DevServer(configuration: configuration, log: { _ in }, defects: defects)
        try server.start()
        return server
    }

    /// Runs every shipped scenario over HTTP against `server`.
    private func runSuite(against server: DevServer) async throws -> [ScenarioResult] {
        let target = try HTTPTarget(
            baseURL: server.baseURL,
            token: try #require(server.conformanceToken),
            timeout: .seconds(10)
        )
        let runner = try await ScenarioRunner(target: try await target.connected())
        var results: [ScenarioResult] = []
        for scenario in try ConformanceSuite(paths: [Self.scenarios]).scenarios {
            results.append(await runner.run(scenario))
        }
        return results
    }

    private func post(_ server: DevServer, _ path: String, token: String?) async throws -> WireResponse {
        let port = try #require(UInt16(server.baseURL.split(separator: ":").last.map(String.init) ?? ""))
        let wire = HTTPWire(host: "127.0.0.1", port: port, timeout: .seconds(5))
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let token {
            headers.append(("Authorization", "Bearer \(token)"))
        }
        let request = WireRequest(method: "POST", target: path, headers: headers, body: Array("{}".utf8))
        return try await wire.send([request])[0].get()
    }

    @Test("Every shipped scenario passes over HTTP against the dev server, none not applicable")
    func shippedScenariosPassOverHTTP() async throws {
        let server = try await startServer()
        defer { server.stop() }
        let results = try await runSuite(against: server)
        #expect(results.count >= 80)
        for result in results {
            #expect(result.passed, "\(result.name): \(result.verdict)")
        }
    }

    @Test("Without --conformance-control the control routes do not exist, and the token is nil")
    func controlIsOffByDefault() async throws {
        let server = try await startServer(control: false)
        defer { server.stop() }
        #expect(server.conformanceToken == nil)
        for path in ["/conformance/v1/capabilities", "/conformance/v1/reset", "/conformance/v1/advanceClock"] {
            let response = try await post(server, path, token: "anything")
            #expect(response.status == 404, "\(path)")
        }
    }

    @Test("The control API answers only with its token: none, a wrong one, and a prefix of it get 401")
    func controlNeedsTheToken() async throws {
        let server = try await startServer()
        defer { server.stop() }
        let token = try #require(server.conformanceToken)
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        for wrong in [nil, "nope", String(token.dropLast()), String(token.dropLast()) + "x"] as [String?] {
            let response = try await post(server, "/conformance/v1/advanceClock", token: wrong)
            #expect(response.status == 401)
            #expect(String(decoding: response.body, as: UTF8.self).contains(#""error":"unauthorized""#))
        }
        let capabilities = try await post(server, "/conformance/v1/capabilities", token: token)
        #expect(capabilities.status == 200)
        let unknown = try await post(server, "/conformance/v1/launchMissiles", token: token)
        #expect(unknown.status == 404)
    }

    @Test("The control API refuses to listen beyond loopback")
    func controlIsLoopbackOnly() async throws {
        var configuration = DevServerConfiguration()
        configuration.host = "0.0.0.0"
        configuration.port = 0
        configuration.conformanceControl = true
        await #expect(throws: HTTPServerError.self) {
            _ = try await DevServer(configuration: configuration, log: { _ in })
        }
    }

    @Test("A server that drops Cache-Control fails the transport scenarios, with the exchange shown")
    func droppedCacheControlIsFound() async throws {
        let server = try await startServer(defects: .init(dropsCacheControl: true))
        defer { server.stop() }
        let results = try await runSuite(against: server)
        let failed = results.filter { !$0.failures.isEmpty }
        let uncacheable = try #require(failed.first { $0.name == "every-response-is-uncacheable-json" })
        let report = uncacheable.failures.joined(separator: "\n")
        #expect(report.contains(#"header Cache-Control: expected "no-store", got nothing"#), "\(report)")
        #expect(report.contains("POST /api/v1/oauth/ios-session HTTP/1.1"), "the request sent is shown")
        #expect(report.contains("HTTP/1.1 "), "the response received is shown")
        #expect(!results.contains { if case .notApplicable = $0.verdict { true } else { false } })
    }

    @Test("A server that stops revoking on replay fails the replay scenarios")
    func missingReplayRevocationIsFound() async throws {
        let server = try await startServer(defects: .init(conformanceStore: { ForgivingStore($0) }))
        defer { server.stop() }
        let results = try await runSuite(against: server)
        let failed = Set(results.filter { !$0.failures.isEmpty }.map(\.name))
        #expect(failed.contains("code-replay-with-proof-revokes-the-grant"), "\(failed)")
        #expect(failed.contains("reused-refresh-tokens-revoke-the-grant"), "\(failed)")
        let replay = try #require(results.first { $0.name == "code-replay-with-proof-revokes-the-grant" })
        #expect(
            replay.failures.contains { $0.contains("authenticated: expected false, got true") },
            "\(replay.failures)"
        )
    }
}

/// A store that forgets to revoke a grant when a code is replayed or a rotated refresh token comes back
/// (G-2), and is right about everything else.
private struct ForgivingStore: ConformanceStore {
    let inner: any ConformanceStore

    init(_ inner: any ConformanceStore) {
        self.inner = inner
    }

    func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        if reason == .codeReplayed || reason == .refreshTokenReused, let grant = try await inner.grant(id) {
            return .revoked(grant)
        }
        return try await inner.revokeGrant(id, reason: reason, at: now)
    }

    func recordTexts() async throws -> [String] { try await inner.recordTexts() }
    func shutDown() async { await inner.shutDown() }
    func client(_ id: ClientID) async throws -> Client? { try await inner.client(id) }
    func insertCode(_ code: AuthorizationCode) async throws { try await inner.insertCode(code) }
    func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        try await inner.authorizationCode(digest)
    }
    func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws
        -> CodeRedemption
    {
        try await inner.redeemCode(digest, issuing: issuance, at: now)
    }
    func createGrant(_ issuance: GrantIssuance) async throws -> GrantCreation {
        try await inner.createGrant(issuance)
    }
    func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try await inner.refreshToken(digest)
    }
    func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        try await inner.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            at: now
        )
    }
    func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws
        -> SessionReplacement
    {
        try await inner.replaceSession(of: grant, with: session, at: now)
    }
    func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        try await inner.revokeGrants(of: account, reason: reason, at: now)
    }
    func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        try await inner.accessToken(digest)
    }
    func session(_ digest: SecretDigest) async throws -> SessionLookup? { try await inner.session(digest) }
    func grant(_ id: GrantID) async throws -> Grant? { try await inner.grant(id) }
    func grants(of account: AccountID) async throws -> [Grant] { try await inner.grants(of: account) }
    func removeExpired(at now: Date) async throws -> Int { try await inner.removeExpired(at: now) }
}
