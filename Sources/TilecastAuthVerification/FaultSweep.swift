// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// Fault injection along every flow: for each flow, the store calls it makes are counted, and then the
/// flow is run once per call with exactly that call failing. Each time:
///
/// - the answer is a clean 503 JSON error with nothing changed — or the documented outcome, where there is
///   one (a refresh whose session cannot start returns the rotated credential without a cookie);
/// - nothing is half-done: no grant without its current refresh token or session, no rotation without
///   its successor, no token, session or redeemed code without its grant;
/// - a retry after the fault behaves as documented.
public enum FaultSweep: Sendable {
    /// What one flow's sweep found.
    public struct FlowResult: Sendable {
        /// The flow's name.
        public let flow: String
        /// How many store calls the flow makes, and so how many faults were injected.
        public let faults: Int
        /// Every broken expectation; empty when the flow held.
        public let violations: [String]
    }

    /// Sweeps every flow.
    public static func run() async -> [FlowResult] {
        var results: [FlowResult] = []
        for flow in Flow.allCases {
            results.append(await sweep(flow))
        }
        return results
    }

    enum Flow: String, CaseIterable {
        case codeExchange = "code exchange"
        case refresh = "refresh"
        case refreshWithSession = "refresh with studio_session"
        case codeReplay = "code replay (revokes)"
        case refreshReuse = "refresh-token reuse (revokes)"
        case signOut = "sign-out by cookie"
        case signOutWithToken = "sign-out by token"
        case revokeAllGrants = "revoke all grants of an account"
    }

    private static func sweep(_ flow: Flow) async -> FlowResult {
        guard let calls = try? await callCount(flow) else {
            return FlowResult(flow: flow.rawValue, faults: 0, violations: ["the flow could not be prepared"])
        }
        var violations: [String] = []
        for call in 1...max(1, calls) {
            do {
                if let violation = try await inject(flow, failing: call) {
                    violations.append("call \(call): \(violation)")
                }
            } catch {
                violations.append("call \(call): \(error)")
            }
        }
        return FlowResult(flow: flow.rawValue, faults: calls, violations: violations)
    }

    /// How many store calls `flow` makes when nothing fails.
    private static func callCount(_ flow: Flow) async throws -> Int {
        let world = try await SweepWorld()
        let before = world.faults.callCount
        _ = try await world.perform(flow)
        return world.faults.callCount - before
    }

    /// Runs `flow` with its `call`-th store call failing, then checks the answer, the store and a retry.
    private static func inject(_ flow: Flow, failing call: Int) async throws -> String? {
        let world = try await SweepWorld()
        let before = world.memory.snapshot()
        world.faults.failCall(number: call)
        let outcome = try await world.perform(flow)
        if let broken = world.halfDone() { return broken }
        let unchanged = world.memory.snapshot() == before

        switch outcome {
        case .response(let response):
            let documentedSessionFailure =
                flow == .refreshWithSession && response.status == 200 && response.headers["Set-Cookie"] == nil
            if documentedSessionFailure {
                // The rotation committed: the new token works, the presented one is spent.
                let retry = try await world.perform(flow)
                guard case .response(let again) = retry, again.status == 400 else {
                    return "a retry with the rotated-away token was not refused as reuse"
                }
                return nil
            }
            guard response.status == 503, response.headers["Set-Cookie"] == nil,
                response.headers["Cache-Control"] == "no-store",
                String(decoding: response.body, as: UTF8.self).contains("\"temporarily_unavailable\"")
            else { return "answered \(response.status) instead of a clean 503" }
            guard unchanged else { return "a 503 left the store changed" }
        case .failed:
            guard unchanged else { return "a failed lifecycle call left the store changed" }
        case .succeeded:
            return nil  // the failing call was one the operation could do without (none today)
        }
        // A retry, with no fault, behaves as the flow does when nothing fails.
        let retry = try await world.perform(flow)
        switch (flow, retry) {
        case (.codeExchange, .response(let response)), (.refresh, .response(let response)),
            (.refreshWithSession, .response(let response)):
            return response.status == 200 ? nil : "the retry answered \(response.status)"
        case (.codeReplay, .response(let response)), (.refreshReuse, .response(let response)):
            return response.status == 400 && world.grantRevoked() ? nil : "the retried replay did not revoke"
        case (_, .succeeded):
            return nil
        default:
            return "the retry failed"
        }
    }
}

/// A prepared world for the sweep: an unused code, a grant whose first refresh token was rotated once,
/// and a session — behind a fault-injecting store.
private struct SweepWorld {
    enum Outcome {
        case response(EndpointResponse)
        case succeeded
        case failed
    }

    let memory = InMemoryGrantStore(clients: [
        Client(id: .tilecastIOS, redirectURIs: [FuzzWorld.callback], allowedScopeTokens: ["tiles:read"])
    ])
    let faults: FaultInjectingStore
    let engine: AuthEngine
    let code: (code: String, verifier: String)
    let used: (code: String, verifier: String)
    let rotated: String
    let current: String
    let session: String

    init() async throws {
        let faults = FaultInjectingStore(memory)
        let random = SeededRandomSource(seed: 0xFA17)
        let engine = try AuthEngine(
            store: faults,
            accounts: InMemoryAccountDirectory(activeAccounts: ["sweep"]),
            rateLimiter: InMemoryRateLimiter(capacity: 1_000_000),
            timeSource: ManualTimeSource(),
            randomSource: random
        )
        let code = try await engine.issueTestCode(account: "sweep", using: random)
        let used = try await engine.issueTestCode(account: "sweep", using: random)
        let signIn = ObservedResponse(await Self.post(engine, Self.exchangeBody(used)))
        guard let first = signIn.refreshToken else { throw SetupFailure() }
        let refreshed = ObservedResponse(await Self.post(engine, Self.refreshBody(first, studioSession: true)))
        guard let second = refreshed.refreshToken, let session = refreshed.sessionID else { throw SetupFailure() }
        self.faults = faults
        self.engine = engine
        self.code = code
        self.used = used
        self.rotated = first
        self.current = second
        self.session = session
    }

    private struct SetupFailure: Error {}

    static func exchangeBody(_ code: (code: String, verifier: String)) -> String {
        #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"\#(code.code)","redirect_uri":"\#(FuzzWorld.callback)","code_verifier":"\#(code.verifier)"}"#
    }

    static func refreshBody(_ token: String, studioSession: Bool) -> String {
        #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"\#(token)","studio_session":\#(studioSession)}"#
    }

    static func post(_ engine: AuthEngine, _ body: String) async -> EndpointResponse {
        await engine.handle(request: FuzzInput.request(body: body))
    }

    func perform(_ flow: FaultSweep.Flow) async throws -> Outcome {
        switch flow {
        case .codeExchange: return .response(await Self.post(engine, Self.exchangeBody(code)))
        case .refresh: return .response(await Self.post(engine, Self.refreshBody(current, studioSession: false)))
        case .refreshWithSession:
            return .response(await Self.post(engine, Self.refreshBody(current, studioSession: true)))
        case .codeReplay: return .response(await Self.post(engine, Self.exchangeBody(used)))
        case .refreshReuse: return .response(await Self.post(engine, Self.refreshBody(rotated, studioSession: false)))
        case .signOut: return await lifecycle { _ = try await engine.signOut(sessionCookieValue: session) }
        case .signOutWithToken:
            return await lifecycle { _ = try await engine.signOut(token: current, client: .tilecastIOS) }
        case .revokeAllGrants: return await lifecycle { _ = try await engine.revokeAllGrants(of: "sweep") }
        }
    }

    private func lifecycle(_ body: () async throws -> Void) async -> Outcome {
        do {
            try await body()
            return .succeeded
        } catch {
            return .failed
        }
    }

    /// Whether the grant of the prepared sign-in is revoked.
    func grantRevoked() -> Bool {
        memory.snapshot().grants.values.allSatisfy { $0.revocation != nil }
    }

    /// A record whose partners are missing, if there is one.
    func halfDone() -> String? {
        let snapshot = memory.snapshot()
        for grant in snapshot.grants.values {
            if let digest = grant.currentRefreshToken, snapshot.refreshTokens[digest]?.state != .active {
                return "grant \(grant.id) points at a refresh token that is missing or not active"
            }
            if let digest = grant.session, snapshot.sessions[digest] == nil {
                return "grant \(grant.id) points at a missing session"
            }
        }
        for token in snapshot.refreshTokens.values {
            guard snapshot.grants[token.grant] != nil else { return "a refresh token without its grant" }
            if case .rotated(_, let successor) = token.state, snapshot.refreshTokens[successor] == nil {
                return "a rotation without its successor"
            }
        }
        if snapshot.accessTokens.values.contains(where: { snapshot.grants[$0.grant] == nil }) {
            return "an access token without its grant"
        }
        if snapshot.sessions.values.contains(where: { snapshot.grants[$0.grant] == nil }) {
            return "a session without its grant"
        }
        if snapshot.codes.values.contains(where: { $0.redemption.map { snapshot.grants[$0.grant] == nil } ?? false }) {
            return "a redeemed code without its grant"
        }
        return nil
    }
}
