// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

/// The engine calls the in-memory store, rate limiter and account directory without suspending when it
/// has them (`AuthEngine+Exchange.swift`), and through their protocols otherwise — as every other test
/// of the engine does, behind a `FaultInjectingStore`. These tests drive the same seeded operations
/// through both paths and require the same answers, the same records and the same security events.
struct InMemoryPathTests {
    /// A rate limiter that only forwards, so that the engine cannot see the in-memory one behind it.
    private struct ForwardingRateLimiter: RateLimiter {
        let base: InMemoryRateLimiter
        func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
            try await base.admit(key, at: now)
        }
    }

    /// An account directory that only forwards.
    private struct ForwardingAccounts: AccountDirectory {
        let base: InMemoryAccountDirectory
        func status(of account: AccountID) async throws -> AccountStatus {
            try await base.status(of: account)
        }
    }

    /// A deterministic random source that can go back to a mark and hand out the same bytes again, as a
    /// broken one might: the next operation then mints keys an earlier one stored.
    final class RewindableRandomSource: RandomSource, Sendable {
        private let state: LockedValue<(generator: SplitMix, mark: SplitMix)>

        init(seed: UInt64) {
            state = LockedValue((SplitMix(state: seed), SplitMix(state: seed)))
        }

        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            state.withLock { state in
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: state.generator.next()) }
            }
        }

        /// Where ``rewind()`` goes back to.
        func mark() { state.withLock { $0.mark = $0.generator } }

        /// Hands out again the bytes handed out since ``mark()``.
        func rewind() { state.withLock { $0.generator = $0.mark } }

        /// Goes on with another sequence: bytes no operation was handed before.
        func reseed(_ seed: UInt64) { state.withLock { $0.generator = SplitMix(state: seed) } }
    }

    /// One engine on its own components, built alike for both paths from the same seed.
    private struct World {
        let memory = InMemoryGrantStore(clients: Harness.clients)
        let accounts = InMemoryAccountDirectory(activeAccounts: [Harness.account, "account-8"])
        let clock = ManualTimeSource()
        /// Every security event the engine reports: the two paths must report the same ones, in order.
        let observer = RecordingObserver()
        let random: RewindableRandomSource
        let engine: AuthEngine

        init(direct: Bool, seed: UInt64, leeway: Duration) throws {
            random = RewindableRandomSource(seed: seed)
            // A small bucket, so that some requests are limited.
            let limiter = InMemoryRateLimiter(capacity: 12, refillInterval: 2)
            engine = try AuthEngine(
                configuration: EngineConfiguration(refreshTokenReuseLeeway: leeway),
                store: direct ? memory : FaultInjectingStore(memory),
                accounts: direct ? accounts : ForwardingAccounts(base: accounts),
                rateLimiter: direct ? limiter : ForwardingRateLimiter(base: limiter),
                observer: observer,
                timeSource: clock,
                randomSource: random
            )
        }

        /// Issues a code for `verifier` to `account`, as the authorize step would; `nil` when refused.
        func issueCode(verifier: String, account: AccountID = Harness.account) async -> String? {
            try? await engine.issueCode(
                account: account,
                client: .tilecastIOS,
                redirectURI: Harness.callback,
                codeChallenge: PKCE.s256Challenge(for: verifier),
                codeChallengeMethod: "S256",
                scope: Harness.scope
            ).code.unredactedValue
        }

        func post(_ json: [String: Any]) async -> EndpointResponse {
            let body = try! JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
            return await engine.handle(
                request: EndpointRequest(
                    method: "POST",
                    headers: ["Content-Type": "application/json"],
                    body: Array(body),
                    peerAddress: "192.0.2.10"
                )
            )
        }
    }

    /// What the two worlds share of a run: the codes, tokens and session ids they were given, which are
    /// the same strings in both, since both mint from the same seed.
    private struct Issued {
        var codes: [(code: String, verifier: String)] = []
        var refreshTokens: [String] = []
        var accessTokens: [String] = []
        var sessions: [String] = []
    }

    @Test(
        "The engine on the in-memory components answers, authenticates and stores as it does through their protocols"
    )
    func samePathsSameAnswers() async throws {
        var steps = 0
        var statuses: [Int: Int] = [:]
        var checks = 0
        var authenticated = 0
        for (seed, leeway) in [(UInt64(1), Duration.zero), (2, .zero), (3, .seconds(5)), (4, .seconds(5))] {
            let direct = try World(direct: true, seed: seed, leeway: leeway)
            let forwarded = try World(direct: false, seed: seed, leeway: leeway)
            #expect(direct.engine.inMemoryStore != nil && direct.engine.inMemoryRateLimiter != nil)
            #expect(direct.engine.inMemoryAccounts != nil)
            #expect(forwarded.engine.inMemoryStore == nil && forwarded.engine.inMemoryRateLimiter == nil)
            #expect(forwarded.engine.inMemoryAccounts == nil)
            var generator = SplitMix(state: seed)
            var issued = Issued()
            for step in 0..<200 {
                let json: [String: Any]?
                switch generator.next() % 9 {
                case 0, 1:
                    // A new code, exchanged with its verifier.
                    let verifier = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
                    let account: AccountID = generator.next() % 3 == 0 ? "account-8" : Harness.account
                    let codes = await [direct, forwarded].asyncMap {
                        await $0.issueCode(verifier: verifier, account: account)
                    }
                    #expect(codes[0] == codes[1], "step \(step): the codes issued")
                    guard let code = codes[0] else { continue }
                    issued.codes.append((code, verifier))
                    json = exchange(code, verifier)
                case 2:
                    // A code again: a replay, or a wrong verifier.
                    guard let (code, verifier) = issued.codes.randomElement(using: &generator) else { continue }
                    json = exchange(code, generator.next() % 2 == 0 ? verifier : String(verifier.reversed()))
                case 3, 4, 5:
                    // The newest refresh token, or an older one, which is reuse.
                    guard !issued.refreshTokens.isEmpty else { continue }
                    let newest = generator.next() % 3 != 0
                    let token =
                        newest
                        ? issued.refreshTokens.last! : issued.refreshTokens.randomElement(using: &generator)!
                    json = [
                        "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": token,
                        "studio_session": generator.next() % 2 == 0,
                    ]
                case 8:
                    // The checks on later requests: a session cookie and a bearer token, current or old.
                    let session = issued.sessions.randomElement(using: &generator) ?? "none"
                    let token = issued.accessTokens.randomElement(using: &generator) ?? "none"
                    let sessions = try await [direct, forwarded].asyncMap {
                        try await $0.engine.authenticateSession(cookieValue: session)
                    }
                    let bearers = try await [direct, forwarded].asyncMap {
                        try await $0.engine.authenticateBearer(authorization: "Bearer \(token)")
                    }
                    #expect(sessions[0] == sessions[1], "step \(step)")
                    #expect(bearers[0] == bearers[1], "step \(step)")
                    checks += 1
                    for result in [sessions[0], bearers[0]] {
                        if case .authenticated = result { authenticated += 1 }
                    }
                    json = nil
                case 6:
                    let seconds = Double(generator.next() % 4_000)
                    direct.clock.advance(by: seconds)
                    forwarded.clock.advance(by: seconds)
                    json = nil
                default:
                    let status: AccountStatus = generator.next() % 2 == 0 ? .inactive : .active
                    direct.accounts.setStatus(status, of: "account-8")
                    forwarded.accounts.setStatus(status, of: "account-8")
                    json = nil
                }
                guard let json else { continue }
                let answers = await [direct, forwarded].asyncMap { await $0.post(json) }
                #expect(answers[0].status == answers[1].status, "step \(step)")
                #expect(answers[0].headers == answers[1].headers, "step \(step)")
                #expect(answers[0].body == answers[1].body, "step \(step)")
                statuses[answers[0].status, default: 0] += 1
                let answer = TestResponse(response: answers[0])
                issued.refreshTokens += [answer.refreshToken].compactMap { $0 }
                issued.accessTokens += [answer.accessToken].compactMap { $0 }
                issued.sessions += [answer.sessionID].compactMap { $0 }
                steps += 1
            }
            // Compared as a Bool: a failure's message would print every record of both stores.
            let sameRecords = direct.memory.snapshot() == forwarded.memory.snapshot()
            #expect(sameRecords, "seed \(seed): the two stores hold different records")
            // The same events, in order: a replay's or a reuse's detection, each revocation, each refusal
            // (events print no secret, so their descriptions are compared).
            let events = [direct, forwarded].map { $0.observer.events.map(\.description) }
            // Compared as a Bool, with where they part in the message, not the hundreds of events.
            let sameEvents = events[0] == events[1]
            let firstDifference =
                events[0].indices.first { $0 >= events[1].count || events[0][$0] != events[1][$0] } ?? events[0].count
            #expect(sameEvents, "seed \(seed): the paths' events part at #\(firstDifference)")
            #expect(!direct.observer.codeReplays.isEmpty || !direct.observer.reuses.isEmpty, "seed \(seed)")
        }
        // The runs reach the answers that matter: issued, refused, forbidden and limited.
        #expect(Set(statuses.keys).isSuperset(of: [200, 400, 403, 429]), "\(statuses)")
        #expect(steps > 400)
        #expect(checks > 40)
        #expect(authenticated > 10, "of \(checks) checks")
    }

    /// The random run above never retries the previous token within the leeway, where the presented
    /// token is not the current one — so it could not tell a direct rotation with the two swapped from
    /// a right one (found in review). Here, on both paths: a retry within the leeway, one asking for a
    /// session, and a reuse after it, which revokes.
    @Test("A retry of the previous refresh token within the leeway, and a reuse after it, answer alike on both paths")
    func leewayRetrySamePaths() async throws {
        var answers: [[EndpointResponse]] = []
        var snapshots: [InMemoryGrantStore.Snapshot] = []
        for direct in [true, false] {
            let world = try World(direct: direct, seed: 11, leeway: .seconds(5))
            let verifier = Base64URL.encode([UInt8](repeating: 0x2A, count: 32))
            let code = try #require(await world.issueCode(verifier: verifier))
            var responses = [await world.post(exchange(code, verifier))]
            let first = try #require(TestResponse(response: responses[0]).refreshToken)
            let refresh = { (token: String, session: Bool) -> [String: Any] in
                [
                    "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": token,
                    "studio_session": session,
                ]
            }
            responses.append(await world.post(refresh(first, false)))
            world.clock.advance(by: 1)
            responses.append(await world.post(refresh(first, false)))  // a retry: rotates from the successor
            responses.append(await world.post(refresh(first, true)))  // again, asking for a session
            world.clock.advance(by: 10)
            responses.append(await world.post(refresh(first, false)))  // past the leeway: reuse, revokes
            answers.append(responses)
            snapshots.append(world.memory.snapshot())
        }
        #expect(answers[0].map(\.status) == [200, 200, 200, 200, 400], "\(answers[0].map(\.status))")
        #expect(answers[0].map(\.status) == answers[1].map(\.status))
        #expect(answers[0].map(\.headers) == answers[1].map(\.headers))
        #expect(answers[0].map(\.body) == answers[1].map(\.body))
        let sameRecords = snapshots[0] == snapshots[1]
        #expect(sameRecords, "the two stores hold different records")
    }

    /// A write the in-memory store refuses by throwing — here because the random source handed out the
    /// bytes of an earlier operation again, so the write names a key already stored — is a 503 with the
    /// write's operation in its security event, on both paths, and writes nothing: the code is not
    /// redeemed, the refresh token not rotated, and each works once the source recovers. The in-place
    /// path names each operation itself (`AuthEngine+Exchange.swift`); no other test made it throw.
    @Test("A write the in-memory store refuses by throwing answers 503 and names its operation alike on both paths")
    func refusedWriteSamePaths() async throws {
        var answers: [[EndpointResponse]] = []
        var snapshots: [InMemoryGrantStore.Snapshot] = []
        for direct in [true, false] {
            let world = try World(direct: direct, seed: 21, leeway: .zero)
            let verifiers = [0x2A, 0x3B].map { Base64URL.encode([UInt8](repeating: $0, count: 32)) }
            let firstCode = try #require(await world.issueCode(verifier: verifiers[0]))
            var responses: [EndpointResponse] = []
            // What the store holds before each refused write must be what it holds after it.
            var unchanged: [Bool] = []
            func refused(_ json: [String: Any]) async {
                world.random.rewind()
                let before = world.memory.snapshot()
                responses.append(await world.post(json))
                unchanged.append(world.memory.snapshot() == before)
            }

            world.random.mark()
            responses.append(await world.post(exchange(firstCode, verifiers[0])))
            let first = try #require(TestResponse(response: responses[0]).refreshToken)
            let secondCode = try #require(await world.issueCode(verifier: verifiers[1]))
            await refused(exchange(secondCode, verifiers[1]))

            world.random.mark()
            responses.append(await world.post(refresh(first, session: false)))
            let second = try #require(TestResponse(response: responses[2]).refreshToken)
            await refused(refresh(second, session: false))
            await refused(refresh(second, session: true))

            // With fresh bytes again, the code and the token that were refused work.
            world.random.reseed(0xF8E5)
            responses.append(await world.post(exchange(secondCode, verifiers[1])))
            responses.append(await world.post(refresh(second, session: true)))

            #expect(responses.map(\.status) == [200, 503, 200, 503, 503, 200, 200], "\(responses.map(\.status))")
            #expect(unchanged == [true, true, true], "direct \(direct)")
            let failures = world.observer.events.filter { $0.kind == .backendFailed }
            #expect(
                failures.map(\.backendOperation) == [
                    .redeemCode, .rotateRefreshToken, .rotateRefreshTokenStartingSession,
                ],
                "direct \(direct): \(failures.map(\.description))"
            )
            answers.append(responses)
            snapshots.append(world.memory.snapshot())
        }
        #expect(answers[0].map(\.headers) == answers[1].map(\.headers))
        #expect(answers[0].map(\.body) == answers[1].map(\.body))
        let sameRecords = snapshots[0] == snapshots[1]
        #expect(sameRecords, "the two stores hold different records")
    }

    private func refresh(_ token: String, session: Bool) -> [String: Any] {
        [
            "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": token,
            "studio_session": session,
        ]
    }

    private func exchange(_ code: String, _ verifier: String) -> [String: Any] {
        [
            "grant_type": "authorization_code", "client_id": "tilecast-ios", "code": code,
            "redirect_uri": Harness.callback, "code_verifier": verifier,
        ]
    }
}

extension Array {
    /// The results of `transform` on each element, in order, one after the other.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self {
            results.append(try await transform(element))
        }
        return results
    }
}
