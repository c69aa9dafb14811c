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
///
/// Every flow is swept on an instance that reads every record and again on one that remembers what it
/// wrote (`GrantStore`'s "Remembered records"), among them the records another instance has since used
/// up. Then each write a flow makes is failed *after* committing, as a lost connection does, on both
/// instances side by side: the remembering one must answer, leave the store and answer the retry as the
/// reading one does; and each such write is failed as one that found the backend unavailable, against a
/// reading instance whose read found it so.
public enum FaultSweep: Sendable {
    /// What one flow's sweep found.
    public struct FlowResult: Sendable {
        /// The flow's name, and the instance it ran on.
        public let flow: String
        /// How many faults were injected.
        public let faults: Int
        /// Every broken expectation; empty when the flow held.
        public let violations: [String]
    }

    /// Sweeps every flow.
    public static func run() async -> [FlowResult] {
        var results: [FlowResult] = []
        for instance in Instance.allCases {
            for flow in Flow.allCases {
                results.append(await sweep(flow, on: instance))
            }
        }
        for flow in [Flow.codeExchange, .refresh, .refreshWithSession, .staleCodeReplay, .staleRefreshReuse] {
            results.append(await loseCommits(of: flow))
            results.append(await failWriteThenRead(in: flow))
            results.append(await findBackendUnavailable(in: flow))
        }
        return results
    }

    enum Flow: String, CaseIterable {
        case codeExchange = "code exchange"
        case refresh = "refresh"
        case refreshWithSession = "refresh with studio_session"
        case codeReplay = "code replay (revokes)"
        case refreshReuse = "refresh-token reuse (revokes)"
        case staleCodeReplay = "replay of a code redeemed by another instance (revokes)"
        case staleRefreshReuse = "reuse of a refresh token rotated by another instance (revokes)"
        case signOut = "sign-out by cookie"
        case signOutWithToken = "sign-out by token"
        case revokeAllGrants = "revoke all grants of an account"

        /// The write a remembering instance goes forward to in this flow without a read, and the read it
        /// makes when the write fails.
        var rememberedWriteAndRead: (FaultInjectingStore.Operation, FaultInjectingStore.Operation)? {
            switch self {
            case .codeExchange, .staleCodeReplay: (.redeemCode, .authorizationCode)
            case .refresh, .refreshWithSession, .staleRefreshReuse: (.rotateRefreshToken, .refreshToken)
            default: nil
            }
        }

        /// The write a remembering instance attempts in this flow on a record another instance used up,
        /// which no reader makes: its failure is answered by the record read after it.
        var writeNoReaderMakes: FaultInjectingStore.Operation? {
            switch self {
            case .staleCodeReplay: .redeemCode
            case .staleRefreshReuse: .rotateRefreshToken
            default: nil
            }
        }
    }

    /// The instance a flow runs on.
    enum Instance: String, CaseIterable {
        case reading = "on an instance reading every record"
        case remembering = "on an instance remembering what it wrote"
    }

    private static func sweep(_ flow: Flow, on instance: Instance) async -> FlowResult {
        let name = "\(flow.rawValue), \(instance.rawValue)"
        guard let calls = try? await callCount(flow, on: instance) else {
            return FlowResult(flow: name, faults: 0, violations: ["the flow could not be prepared"])
        }
        var violations: [String] = []
        for call in 1...max(1, calls) {
            do {
                if let violation = try await inject(flow, on: instance, failing: call) {
                    violations.append("call \(call): \(violation)")
                }
            } catch {
                violations.append("call \(call): \(error)")
            }
        }
        return FlowResult(flow: name, faults: calls, violations: violations)
    }

    /// How many store calls `flow` makes when nothing fails.
    private static func callCount(_ flow: Flow, on instance: Instance) async throws -> Int {
        let world = try await SweepWorld(instance)
        let before = world.faults.callCount
        _ = try await world.perform(flow)
        return world.faults.callCount - before
    }

    /// Runs `flow` with its `call`-th store call failing, then checks the answer, the store and a retry.
    private static func inject(_ flow: Flow, on instance: Instance, failing call: Int) async throws -> String? {
        let world = try await SweepWorld(instance)
        let before = world.memory.snapshot()
        world.faults.failCall(number: call)
        let outcome = try await world.perform(flow)
        if let broken = world.halfDone() { return broken }
        let unchanged = world.memory.snapshot() == before

        if instance == .remembering, let write = flow.writeNoReaderMakes, world.faults.injectedFaults == [write] {
            // The failed call was the write a remembering instance attempts on a record another used
            // up, which no reader makes; the record read after it decides, as a reader's read does: the
            // answer and the store are a reader's without any fault — the replay or reuse revoked, not a
            // 503. The retry is checked below.
            guard try await outcome.summary == answerWithoutFaults(flow) else {
                return
                    "answered \(outcome.summary) after its \(write.rawValue) failed, where a reader answers otherwise"
            }
            guard world.storeShape() == (try await shapeWithoutFaults(flow)) else {
                return "the store differs from a reader's after its \(write.rawValue) failed"
            }
        } else {
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
        }
        // A retry, with no fault, behaves as the flow does when nothing fails.
        let retry = try await world.perform(flow)
        switch (flow, retry) {
        case (.codeExchange, .response(let response)), (.refresh, .response(let response)),
            (.refreshWithSession, .response(let response)):
            return response.status == 200 ? nil : "the retry answered \(response.status)"
        case (.codeReplay, .response(let response)), (.refreshReuse, .response(let response)),
            (.staleCodeReplay, .response(let response)), (.staleRefreshReuse, .response(let response)):
            return response.status == 400 && world.grantRevoked(by: flow) ? nil : "the retried replay did not revoke"
        case (_, .succeeded):
            return nil
        default:
            return "the retry failed"
        }
    }

    /// What a reading instance answers to `flow` when nothing fails.
    private static func answerWithoutFaults(_ flow: Flow) async throws -> String {
        try await SweepWorld(.reading).perform(flow).summary
    }

    /// The store as `flow` leaves it on a reading instance when nothing fails.
    private static func shapeWithoutFaults(_ flow: Flow) async throws -> String {
        let world = try await SweepWorld(.reading)
        _ = try await world.perform(flow)
        return world.storeShape()
    }

    /// Runs `flow` with each write it may make failing after its commit, on a reading and a remembering
    /// instance side by side, and compares what they answer, what they leave in the store, and how they
    /// answer the retry.
    private static func loseCommits(of flow: Flow) async -> FlowResult {
        let name = "\(flow.rawValue), its write's commit lost, remembering against reading"
        var violations: [String] = []
        var faults = 0
        for write in [FaultInjectingStore.Operation.redeemCode, .rotateRefreshToken] {
            do {
                let reading = try await loseCommit(of: write, in: flow, on: .reading)
                let remembering = try await loseCommit(of: write, in: flow, on: .remembering)
                guard reading.taken || remembering.taken else { continue }
                faults += 1
                if let broken = reading.broken ?? remembering.broken {
                    violations.append("\(write.rawValue): \(broken)")
                } else if remembering.observed != reading.observed {
                    violations.append(
                        "\(write.rawValue): remembering \(remembering.observed), reading \(reading.observed)"
                    )
                }
            } catch {
                violations.append("\(write.rawValue): \(error)")
            }
        }
        return FlowResult(flow: name, faults: faults, violations: violations)
    }

    /// Fails, on a remembering instance, the write `flow` goes forward to and then the read that follows
    /// it, and compares the answer, the security events and the store with a reading instance's whose
    /// read fails: a reader that fails there never got as far as a write, so both answer a clean 503
    /// naming the read, and change nothing.
    private static func failWriteThenRead(in flow: Flow) async -> FlowResult {
        let name = "\(flow.rawValue), its write and then its read failing, remembering against reading"
        guard let (write, read) = flow.rememberedWriteAndRead else {
            return FlowResult(flow: name, faults: 0, violations: ["the flow has no remembered write"])
        }
        do {
            let reading = try await SweepWorld(.reading)
            reading.faults.failNext(read)
            let remembering = try await SweepWorld(.remembering)
            remembering.faults.failNext(write)
            remembering.faults.failNext(read)
            var observed: [[String]] = []
            for world in [reading, remembering] {
                let before = world.memory.snapshot()
                let outcome = try await world.perform(flow)
                guard outcome.isCleanFailure, world.memory.snapshot() == before else {
                    return FlowResult(
                        flow: name,
                        faults: 2,
                        violations: ["answered \(outcome.summary) or changed the store, instead of a clean 503"]
                    )
                }
                observed.append([outcome.summary] + world.events.taken())
            }
            guard remembering.faults.injectedFaults == [write, read] else {
                return FlowResult(
                    flow: name,
                    faults: 2,
                    violations: ["the faults taken were \(remembering.faults.injectedFaults)"]
                )
            }
            let violations = observed[0] == observed[1] ? [] : ["remembering \(observed[1]), reading \(observed[0])"]
            return FlowResult(flow: name, faults: 2, violations: violations)
        } catch {
            return FlowResult(flow: name, faults: 2, violations: ["\(error)"])
        }
    }

    /// Fails, on a remembering instance, the write `flow` goes forward to with an error saying the backend
    /// was unavailable (`BackendAvailabilityError`), and on a reading instance the read with the same:
    /// both answer a clean 503 and change nothing, the remembering one without a read after its write —
    /// a reader whose read began as the write did would have found the backend unavailable too — and
    /// each answers the retry, with nothing failing, as the flow does.
    private static func findBackendUnavailable(in flow: Flow) async -> FlowResult {
        let name = "\(flow.rawValue), the backend unavailable to its write, remembering against reading"
        guard let (write, read) = flow.rememberedWriteAndRead else {
            return FlowResult(flow: name, faults: 0, violations: ["the flow has no remembered write"])
        }
        do {
            let reading = try await SweepWorld(.reading)
            reading.faults.failNextAsUnavailable(read)
            let remembering = try await SweepWorld(.remembering)
            remembering.faults.failNextAsUnavailable(write)
            var observed: [[String]] = []
            for (world, fault) in [(reading, read), (remembering, write)] {
                let (before, calls) = (world.memory.snapshot(), world.faults.callCount)
                let outcome = try await world.perform(flow)
                guard outcome.isCleanFailure, world.memory.snapshot() == before else {
                    return FlowResult(
                        flow: name,
                        faults: 1,
                        violations: ["answered \(outcome.summary) or changed the store, instead of a clean 503"]
                    )
                }
                guard world.faults.injectedFaults == [fault], world.faults.callCount - calls == 1 else {
                    return FlowResult(
                        flow: name,
                        faults: 1,
                        violations: [
                            "made \(world.faults.callCount - calls) store calls, meeting \(world.faults.injectedFaults)"
                        ]
                    )
                }
                _ = world.events.taken()
                let retry = try await world.perform(flow)
                observed.append([outcome.summary, retry.summary] + world.events.taken() + [world.storeShape()])
            }
            let violations = observed[0] == observed[1] ? [] : ["remembering \(observed[1]), reading \(observed[0])"]
            return FlowResult(flow: name, faults: 1, violations: violations)
        } catch {
            return FlowResult(flow: name, faults: 1, violations: ["\(error)"])
        }
    }

    /// What one instance did when `write`'s commit was lost in `flow`: whether the fault was taken, what
    /// was seen, and anything half-done.
    private static func loseCommit(
        of write: FaultInjectingStore.Operation,
        in flow: Flow,
        on instance: Instance
    ) async throws -> (taken: Bool, observed: [String], broken: String?) {
        let world = try await SweepWorld(instance)
        world.faults.failNextAfterCommitting(write)
        let first = try await world.perform(flow)
        let firstEvents = world.events.taken()
        let taken = world.faults.waitingFailures == 0
        if let broken = world.halfDone() { return (taken, [], "after the lost commit: \(broken)") }
        let afterFirst = world.storeShape()
        let retry = try await world.perform(flow)
        if let broken = world.halfDone() { return (taken, [], "after the retry: \(broken)") }
        return (
            taken,
            [first.summary] + firstEvents + [afterFirst, retry.summary] + world.events.taken() + [world.storeShape()],
            nil
        )
    }
}

/// A prepared world for the sweep: an unused code, a grant whose first refresh token was rotated once,
/// and a session — behind a fault-injecting store — and, for the flows that meet records another
/// instance used up, a code and a refresh token the swept instance wrote and another since redeemed or
/// rotated. The swept instance is `engine`; `other` is the other instance on the same store.
private struct SweepWorld {
    enum Outcome {
        case response(EndpointResponse)
        case succeeded
        case failed

        /// Whether this is what a failed store call must give when nothing else decides the answer: a
        /// 503 or a failed lifecycle call.
        var isCleanFailure: Bool {
            switch self {
            case .response(let response): response.status == 503
            case .failed: true
            case .succeeded: false
            }
        }

        /// What the lost-commit comparison looks at: the status, the error and whether a cookie was set.
        var summary: String {
            switch self {
            case .response(let response):
                let observed = ObservedResponse(response)
                return "\(observed.status) \(observed.error ?? "-") cookies \(observed.setCookieCount)"
            case .succeeded: return "succeeded"
            case .failed: return "failed"
            }
        }
    }

    let memory = InMemoryGrantStore(clients: [
        Client(id: .tilecastIOS, redirectURIs: [FuzzWorld.callback], allowedScopeTokens: ["tiles:read"])
    ])
    let faults: FaultInjectingStore
    let engine: AuthEngine
    /// The swept instance's security events.
    let events = EventLog()
    let code: (code: String, verifier: String)
    let used: (code: String, verifier: String)
    let rotated: String
    let current: String
    let session: String
    /// A code `engine` issued and `other` redeemed.
    let redeemedElsewhere: (code: String, verifier: String)
    /// A refresh token `engine` wrote and `other` rotated.
    let rotatedElsewhere: String
    /// The grants of the sign-in, of `redeemedElsewhere` and of `rotatedElsewhere`.
    let grants: (signIn: GrantID, redeemedElsewhere: GrantID, rotatedElsewhere: GrantID)

    init(_ instance: FaultSweep.Instance) async throws {
        let faults = FaultInjectingStore(memory)
        let random = SeededRandomSource(seed: 0xFA17)
        let (clock, accounts) = (ManualTimeSource(), InMemoryAccountDirectory(activeAccounts: ["sweep"]))
        let stores: [any GrantStore] =
            switch instance {
            case .reading: [faults, faults]
            case .remembering: [RememberingStore(faults), RememberingStore(faults)]
            }
        let events = self.events
        let engines = try stores.enumerated().map { index, store in
            try AuthEngine(
                store: store,
                accounts: accounts,
                rateLimiter: InMemoryRateLimiter(capacity: 1_000_000),
                observer: index == 0 ? events : NoOpSecurityEventObserver(),
                timeSource: clock,
                randomSource: random
            )
        }
        let (engine, other) = (engines[0], engines[1])
        let code = try await engine.issueTestCode(account: "sweep", using: random)
        let used = try await engine.issueTestCode(account: "sweep", using: random)
        let signIn = ObservedResponse(await Self.post(engine, Self.exchangeBody(used)))
        guard let first = signIn.refreshToken else { throw SetupFailure("the sign-in failed") }
        let refreshed = ObservedResponse(await Self.post(engine, Self.refreshBody(first, studioSession: true)))
        guard let second = refreshed.refreshToken, let session = refreshed.sessionID else {
            throw SetupFailure("the refresh failed")
        }
        let redeemedElsewhere = try await engine.issueTestCode(account: "sweep", using: random)
        let elsewhere = ObservedResponse(await Self.post(other, Self.exchangeBody(redeemedElsewhere)))
        let staleCode = try await engine.issueTestCode(account: "sweep", using: random)
        let staleSignIn = ObservedResponse(await Self.post(engine, Self.exchangeBody(staleCode)))
        guard let elsewhereToken = elsewhere.refreshToken, let rotatedElsewhere = staleSignIn.refreshToken,
            ObservedResponse(await Self.post(other, Self.refreshBody(rotatedElsewhere, studioSession: false)))
                .status == 200
        else { throw SetupFailure("a sign-in or refresh on the other instance failed") }

        self.faults = faults
        self.engine = engine
        self.code = code
        self.used = used
        self.rotated = first
        self.current = second
        self.session = session
        self.redeemedElsewhere = redeemedElsewhere
        self.rotatedElsewhere = rotatedElsewhere
        self.grants = (
            try await Self.grant(of: first, in: memory), try await Self.grant(of: elsewhereToken, in: memory),
            try await Self.grant(of: rotatedElsewhere, in: memory)
        )
        events.label(grants.signIn, "sign-in")
        events.label(grants.redeemedElsewhere, "redeemed elsewhere")
        events.label(grants.rotatedElsewhere, "rotated elsewhere")
        _ = events.taken()
        if instance == .remembering {
            // The flows on remembered records must meet them: fresh for the exchange and the refresh,
            // stale for the replay and the reuse of records used up elsewhere.
            let store = stores[0]
            guard store.rememberedAuthorizationCode(try Self.digest(code.code, .authorizationCode)) != nil,
                store.rememberedAuthorizationCode(try Self.digest(redeemedElsewhere.code, .authorizationCode)) != nil,
                store.rememberedRefreshToken(try Self.digest(second, .refreshToken)) != nil,
                store.rememberedRefreshToken(try Self.digest(rotatedElsewhere, .refreshToken)) != nil
            else { throw SetupFailure("the swept instance does not remember the records its flows present") }
        }
    }

    private struct SetupFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private static func digest(_ value: String, _ kind: SecretKind) throws -> SecretDigest {
        guard let token = OpaqueToken(presented: value, as: kind) else { throw SetupFailure("a malformed secret") }
        return token.digest
    }

    private static func grant(of refreshToken: String, in memory: InMemoryGrantStore) async throws -> GrantID {
        guard let grant = try await memory.refreshToken(try digest(refreshToken, .refreshToken))?.grant.id else {
            throw SetupFailure("a refresh token without its grant")
        }
        return grant
    }

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
        case .staleCodeReplay: return .response(await Self.post(engine, Self.exchangeBody(redeemedElsewhere)))
        case .staleRefreshReuse:
            return .response(await Self.post(engine, Self.refreshBody(rotatedElsewhere, studioSession: false)))
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

    /// Whether the grant a replay or reuse `flow` presents a record of is revoked.
    func grantRevoked(by flow: FaultSweep.Flow) -> Bool {
        let grant =
            switch flow {
            case .staleCodeReplay: grants.redeemedElsewhere
            case .staleRefreshReuse: grants.rotatedElsewhere
            default: grants.signIn
            }
        return memory.snapshot().grants[grant]?.revocation != nil
    }

    /// The store's records as the lost-commit comparison sees them: the values of the secrets aside,
    /// which an instance that goes forward on a remembered record draws where a reading one does not.
    func storeShape() -> String {
        let snapshot = memory.snapshot()
        let codes = snapshot.codes.values.map { $0.redemption == nil ? "unused" : "redeemed" }.sorted()
        let grants = snapshot.grants.values.map { $0.revocation.map { "\($0.reason)" } ?? "live" }.sorted()
        let tokens = snapshot.refreshTokens.values.map { $0.state == .active ? "active" : "rotated" }.sorted()
        return
            "codes \(codes), grants \(grants), refresh tokens \(tokens), \(snapshot.accessTokens.count) access tokens, \(snapshot.sessions.count) sessions"
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

/// The security events of the swept instance, each as its kind and the members that say what happened —
/// the grant named by its part in the prepared world, since the grant a flow creates gets an id drawn
/// where the two instances may have drawn differently.
private final class EventLog: SecurityEventObserver, Sendable {
    private let state = LockedValue<(events: [String], labels: [GrantID: String])>(([], [:]))

    func label(_ grant: GrantID, _ label: String) {
        state.withLock { $0.labels[grant] = label }
    }

    func observe(_ event: SecurityEvent) {
        state.withLock { state in
            var parts = [event.kind.description]
            if let grant = event.grant { parts.append("grant=\(state.labels[grant] ?? "new")") }
            if let reason = event.revocationReason { parts.append("reason=\(reason)") }
            if let operation = event.backendOperation { parts.append("operation=\(operation)") }
            if let refusal = event.refusal { parts.append("refusal=\(refusal)") }
            state.events.append(parts.joined(separator: " "))
        }
    }

    /// The events since the last call.
    func taken() -> [String] {
        state.withLock { state in
            defer { state.events = [] }
            return state.events
        }
    }
}
