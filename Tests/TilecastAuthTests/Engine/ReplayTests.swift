// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules C-8, R-5, R-6 and G-2: replayed codes and reused refresh tokens.
struct ReplayTests {
    @Test("A used code presented again with valid proof is refused and revokes its grant, tokens and session")
    func codeReplayWithProof() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let first = await harness.exchange(code: code, verifier: verifier)
        #expect(first.status == 200)

        let replay = await harness.exchange(code: code, verifier: verifier)
        #expect(replay.status == 400)
        #expect(replay.errorCode == "invalid_grant")
        #expect(replay.setCookies.isEmpty)
        #expect(harness.observer.codeReplays.count == 1)
        #expect(harness.observer.revocations.map(\.1) == [.codeReplayed])

        #expect(try await !harness.sessionAuthenticates(first.sessionID))
        #expect(try await !harness.bearerAuthenticates(first.accessToken))
        #expect(await harness.refresh(try #require(first.refreshToken)).status == 400)
    }

    @Test("A used code replayed without valid proof is refused and revokes nothing")
    func codeReplayWithoutProof() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let first = await harness.exchange(code: code, verifier: verifier)
        let before = harness.memory.snapshot()

        let wrongVerifier = await harness.exchange(code: code, verifier: harness.newVerifier())
        let wrongRedirect = await harness.exchange(
            code: code,
            verifier: verifier,
            redirectURI: "tilecast-ios://oauth/x"
        )
        let wrongClient = await harness.exchange(code: code, verifier: verifier, clientID: "tilecast-web")
        for response in [wrongVerifier, wrongRedirect, wrongClient] {
            #expect(response.status == 400)
        }
        #expect(harness.memory.snapshot() == before)
        #expect(harness.observer.revocations.isEmpty)
        #expect(try await harness.sessionAuthenticates(first.sessionID))
    }

    @Test("A rotated refresh token presented again is refused and its whole grant is revoked, session included")
    func refreshTokenReuse() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let first = try #require(signIn.refreshToken)
        let refreshed = await harness.refresh(first, studioSession: true)
        #expect(refreshed.status == 200)

        let reuse = await harness.refresh(first)
        #expect(reuse.status == 400)
        #expect(reuse.errorCode == "invalid_grant")
        #expect(harness.observer.reuses.count == 1)
        #expect(harness.observer.revocations.map(\.1) == [.refreshTokenReused])

        #expect(await harness.refresh(try #require(refreshed.refreshToken)).status == 400)
        #expect(try await !harness.bearerAuthenticates(refreshed.accessToken))
        #expect(try await !harness.sessionAuthenticates(refreshed.sessionID))
        #expect(try await !harness.sessionAuthenticates(signIn.sessionID))
    }

    @Test("Reuse is detected for every earlier generation, not only the previous one")
    func olderGenerationReuse() async throws {
        let harness = try Harness()
        let first = try #require(try await harness.signIn().refreshToken)
        let second = try #require(await harness.refresh(first).refreshToken)
        let third = try #require(await harness.refresh(second).refreshToken)
        #expect(await harness.refresh(first).status == 400)
        #expect(harness.observer.reuses.count == 1)
        #expect(await harness.refresh(third).status == 400)
    }

    @Test("The reuse leeway is off by default")
    func leewayOffByDefault() {
        #expect(EngineConfiguration().refreshTokenReuseLeeway == .zero)
    }

    @Test("Within the leeway only the immediately previous token may be retried; it retires the successor it replaces")
    func leewayRetry() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))
        let first = try #require(try await harness.signIn().refreshToken)
        let lost = await harness.refresh(first)  // the app never receives this response
        let lostToken = try #require(lost.refreshToken)
        harness.clock.advance(by: 5)

        let retried = await harness.refresh(first)
        #expect(retried.status == 200)
        let kept = try #require(retried.refreshToken)
        #expect(kept != lostToken)
        #expect(harness.observer.revocations.isEmpty)

        // The successor the retry replaced is retired: using it is reuse.
        #expect(await harness.refresh(lostToken).status == 400)
        #expect(harness.observer.reuses.count == 1)
        #expect(await harness.refresh(kept).status == 400)
    }

    @Test("Past the leeway a retry is reuse")
    func leewayExpired() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))
        let first = try #require(try await harness.signIn().refreshToken)
        let next = try #require(await harness.refresh(first).refreshToken)
        harness.clock.advance(by: 11)
        #expect(await harness.refresh(first).status == 400)
        #expect(harness.observer.reuses.count == 1)
        #expect(await harness.refresh(next).status == 400)
    }

    @Test("A clock set back does not stretch the leeway: an hour back, then half an hour on, is reuse")
    func leewayWithClockSetBack() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(60)))
        let first = try #require(try await harness.signIn().refreshToken)
        let next = try #require(await harness.refresh(first).refreshToken)
        // An NTP step back, or another instance with a skewed clock sharing the store.
        harness.clock.advance(by: -3600)
        harness.clock.advance(by: 1800)
        let retried = await harness.refresh(first)
        #expect(retried.status == 400)
        #expect(retried.errorCode == "invalid_grant")
        #expect(harness.observer.reuses.count == 1)
        #expect(await harness.refresh(next).status == 400)
    }

    @Test("An instance whose clock is behind by less than the leeway may still take the retry")
    func leewayWithSlightlySkewedClock() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))
        let first = try #require(try await harness.signIn().refreshToken)
        _ = await harness.refresh(first)  // lost on the way back
        harness.clock.advance(by: -4)
        #expect(await harness.refresh(first).status == 200)
        #expect(harness.observer.reuses.isEmpty)
        harness.clock.advance(by: -7)  // now 11 s behind the rotation: past the leeway, on the other side
        #expect(await harness.refresh(first).status == 400)
    }

    @Test("The leeway window is open at both ends: a retry exactly the leeway after the rotation is reuse")
    func leewayEndsAtItsBound() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))
        let first = try #require(try await harness.signIn().refreshToken)
        let next = try #require(await harness.refresh(first).refreshToken)
        harness.clock.advance(by: 10)  // the leeway has ended at this instant, as every expiry does (C-9)
        #expect(await harness.refresh(first).status == 400)
        #expect(harness.observer.reuses.count == 1)
        #expect(await harness.refresh(next).status == 400)
    }

    @Test("A clock exactly the leeway behind the rotation treats a retry as reuse")
    func leewayEndsAtItsBoundWithClockSetBack() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))
        let first = try #require(try await harness.signIn().refreshToken)
        _ = await harness.refresh(first)  // lost on the way back
        harness.clock.advance(by: -10)
        #expect(await harness.refresh(first).status == 400)
        #expect(harness.observer.reuses.count == 1)
    }

    @Test("The leeway never resurrects an older generation")
    func leewayOlderGeneration() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(30)))
        let first = try #require(try await harness.signIn().refreshToken)
        let second = try #require(await harness.refresh(first).refreshToken)
        _ = try #require(await harness.refresh(second).refreshToken)
        // `first` is two generations back: its successor is no longer current.
        #expect(await harness.refresh(first).status == 400)
        #expect(harness.observer.reuses.count == 1)
    }

    @Test("The leeway is at most 60 seconds")
    func leewayBound() {
        #expect(throws: ConfigurationError.self) {
            try EngineConfiguration(refreshTokenReuseLeeway: .seconds(61)).validate()
        }
    }
}
