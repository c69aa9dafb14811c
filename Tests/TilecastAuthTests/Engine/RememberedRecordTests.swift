// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// `GrantStore`'s "Remembered records": a store may answer the codes and refresh tokens it wrote from
/// memory, stale by design. The engine goes forward on one only as far as the atomic write and decides
/// every other answer on the record read from the store — so a stale record changes no answer. The
/// records are planted in the harness's `FaultInjectingStore`, the store's own copies changed behind them.
struct RememberedRecordTests {
    /// The stored code of `code`, as its insert wrote it.
    private func storedCode(_ code: String, _ harness: Harness) async throws -> AuthorizationCode {
        let digest = try #require(OpaqueToken(presented: code, as: .authorizationCode)).digest
        return try #require(try await harness.memory.authorizationCode(digest))
    }

    /// The stored refresh token `token` and its grant, as they stand.
    private func storedToken(_ token: String, _ harness: Harness) async throws -> RefreshTokenLookup {
        let digest = try #require(OpaqueToken(presented: token, as: .refreshToken)).digest
        return try #require(try await harness.memory.refreshToken(digest))
    }

    @Test("A remembered code that passes its checks is redeemed without reading it from the store")
    func rememberedCodeSkipsTheRead() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.faults.remember(try await storedCode(code, harness))
        // A read would fail: the exchange succeeds only if it never happens.
        harness.faults.failNext(.authorizationCode)
        let response = await harness.exchange(code: code, verifier: verifier)
        #expect(response.status == 200)
        #expect(!harness.observer.events.contains { $0.kind == .backendFailed })
    }

    @Test("A remembered code its checks refuse is read from the store before the refusal")
    func refusalOnARememberedCodeReadsIt() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.faults.remember(try await storedCode(code, harness))
        harness.faults.failNext(.authorizationCode)
        let before = harness.memory.snapshot()
        // The wrong verifier fails on the remembered record; the answer waits for the read, which fails.
        let response = await harness.exchange(code: code, verifier: harness.newVerifier())
        #expect(response.status == 503)
        #expect(harness.memory.snapshot() == before)
    }

    @Test(
        "A used code remembered unused, replayed with proof, revokes its grant as a fresh read does",
        arguments: [(false, false), (true, false), (false, true), (true, true)]
    )
    func staleCodeReplay(accountInactive: Bool, codeExpired: Bool) async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let unused = try await storedCode(code, harness)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
        harness.faults.remember(unused)
        if accountInactive { harness.accounts.setStatus(.inactive, of: Harness.account) }
        if codeExpired { harness.clock.advance(by: 3_600) }
        let replay = await harness.exchange(code: code, verifier: verifier)
        #expect(replay.status == 400)
        #expect(replay.errorCode == "invalid_grant")
        #expect(harness.observer.revocations.map(\.1) == [.codeReplayed])
    }

    @Test(
        "A rotated refresh token remembered current, presented again, revokes its grant as a fresh read does",
        arguments: [false, true]
    )
    func staleTokenReuse(accountInactive: Bool) async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let current = try await storedToken(token, harness)
        #expect(await harness.refresh(token).status == 200)
        harness.faults.remember(current)
        if accountInactive { harness.accounts.setStatus(.inactive, of: Harness.account) }
        let reuse = await harness.refresh(token)
        #expect(reuse.status == 400)
        #expect(reuse.errorCode == "invalid_grant")
        #expect(harness.observer.revocations.map(\.1) == [.refreshTokenReused])
    }

    @Test("Within the leeway, a rotated token remembered current is retried, and its stale rotation is not counted")
    func staleTokenRetry() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(30)))
        let token = try #require(try await harness.signIn().refreshToken)
        let current = try await storedToken(token, harness)
        #expect(await harness.refresh(token).status == 200)
        harness.faults.remember(current)
        harness.clock.advance(by: 5)
        let retry = await harness.refresh(token)
        #expect(retry.status == 200)
        #expect(harness.observer.revocations.isEmpty)
    }

    @Test("A refresh token remembered live, whose grant was revoked since, is refused and changes nothing")
    func staleTokenOfARevokedGrant() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let current = try await storedToken(token, harness)
        _ = try await harness.engine.revokeGrant(current.grant.id)
        harness.faults.remember(current)
        let before = harness.memory.snapshot()
        let response = await harness.refresh(token)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_grant")
        #expect(harness.memory.snapshot() == before)
    }
}
