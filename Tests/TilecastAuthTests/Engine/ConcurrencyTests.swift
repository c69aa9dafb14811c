// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules C-11 and R-8: concurrent requests with real concurrent tasks.
struct ConcurrencyTests {
    @Test("50 simultaneous redemptions of one code yield exactly one 200 and one grant")
    func concurrentRedemptions() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { await harness.exchange(code: code, verifier: verifier).status }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.filter { $0 == 400 }.count == 49)
        #expect(!statuses.contains { $0 >= 500 })
        let snapshot = harness.memory.snapshot()
        #expect(snapshot.grants.count == 1)
        #expect(snapshot.refreshTokens.count == 1)
        #expect(snapshot.sessions.count == 1)
        // Every loser held valid proof for a used code: a replay, which revokes the one grant.
        #expect(snapshot.grants.values.first?.revocation?.reason == .codeReplayed)
    }

    @Test("50 simultaneous refreshes of one token yield exactly one rotation")
    func concurrentRefreshes() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { await harness.refresh(token, studioSession: true).status }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(!statuses.contains { $0 >= 500 })
        let tokens = harness.memory.snapshot().refreshTokens.values
        #expect(tokens.count == 2)
        #expect(tokens.filter { if case .rotated = $0.state { true } else { false } }.count == 1)
        // The losers presented a rotated token: reuse, which revokes the grant.
        #expect(harness.memory.snapshot().grants.values.first?.revocation?.reason == .refreshTokenReused)
    }

    @Test("Within a leeway, concurrent retries of one token all succeed and leave one live successor")
    func concurrentRefreshesWithLeeway() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(30)))
        let token = try #require(try await harness.signIn().refreshToken)
        let responses = await withTaskGroup(of: TestResponse.self) { group in
            for _ in 0..<20 {
                group.addTask { await harness.refresh(token) }
            }
            return await group.reduce(into: [TestResponse]()) { $0.append($1) }
        }
        // A retry superseded three times in a row is told to retry (503, Retry-After: 1): the engine bounds
        // the rotations one request makes, and the token is still valid. On two cores that needs another
        // thread to win three rotations inside one request's window, which a loaded CI machine once
        // produced. Everything else succeeds, and a retry as the answer asks succeeds too.
        let statuses = responses.map(\.status)
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 }, "\(statuses)")
        var answered = responses.filter { $0.status == 200 }
        for contended in responses where contended.status == 503 {
            #expect(contended.errorCode == "temporarily_unavailable")
            #expect(contended.response.headers["Retry-After"] == "1")
            let retried = await harness.refresh(token)
            #expect(retried.status == 200)
            answered.append(retried)
        }
        #expect(harness.observer.revocations.isEmpty)
        let grant = try #require(harness.memory.snapshot().grants.values.first)
        let live = answered.compactMap(\.refreshToken).filter {
            OpaqueToken(presented: $0, as: .refreshToken)?.digest == grant.currentRefreshToken
        }
        #expect(live.count == 1)
    }

    @Test("Many accounts signing in at once never collide and never fail")
    func manySignIns() async throws {
        let harness = try Harness()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask { try await harness.signIn().status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 100))
        #expect(harness.memory.snapshot().grants.count == 100)
    }
}
