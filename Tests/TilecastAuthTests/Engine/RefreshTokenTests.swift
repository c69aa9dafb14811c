// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules: `refresh_token` rotation, lifetimes and the optional Studio session.
struct RefreshTokenTests {
    @Test("A refresh rotates the token: the old one is dead, the new one has the same scope")
    func rotation() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let first = try #require(signIn.refreshToken)

        let refreshed = await harness.refresh(first)
        #expect(refreshed.status == 200)
        #expect(refreshed.authenticated == false)
        #expect(refreshed.setCookies.isEmpty)
        let second = try #require(refreshed.refreshToken)
        #expect(second != first)
        #expect(refreshed.credential?["scope"] as? String == signIn.credential?["scope"] as? String)
        #expect(try await harness.bearerAuthenticates(refreshed.accessToken))

        #expect(await harness.refresh(second).status == 200)
    }

    @Test(
        "Without studio_session the existing session is untouched and no cookie is set",
        arguments: [nil, false] as [Bool?]
    )
    func withoutStudioSession(studioSession: Bool?) async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let sessionsBefore = harness.memory.snapshot().sessions
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: studioSession)
        #expect(refreshed.status == 200)
        #expect(refreshed.authenticated == false)
        #expect(refreshed.setCookies.isEmpty)
        #expect(harness.memory.snapshot().sessions == sessionsBefore)
        #expect(try await harness.sessionAuthenticates(signIn.sessionID))
    }

    @Test("studio_session: null or \"\" counts as absent")
    func studioSessionWithoutValue() async throws {
        let harness = try Harness()
        for value in [NSNull(), "" as Any] as [Any] {
            let signIn = try await harness.signIn()
            let response = await harness.post(json: [
                "grant_type": "refresh_token", "client_id": "tilecast-ios",
                "refresh_token": try #require(signIn.refreshToken), "studio_session": value,
            ])
            #expect(response.status == 200)
            #expect(response.authenticated == false)
        }
    }

    @Test("With studio_session a new session replaces the grant's earlier one and its cookie is set")
    func withStudioSession() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(refreshed.status == 200)
        #expect(refreshed.authenticated == true)
        #expect(refreshed.setCookies.count == 1)
        #expect(refreshed.credential != nil)
        #expect(refreshed.sessionID != signIn.sessionID)
        #expect(try await harness.sessionAuthenticates(refreshed.sessionID))
        #expect(try await !harness.sessionAuthenticates(signIn.sessionID))
        #expect(harness.memory.snapshot().sessions.count == 1)
    }

    @Test(
        "With studio_session the rotation and the session start are one operation of the store, or two of one that starts sessions separately",
        arguments: [(false, 2), (true, 3)]
    )
    func rotationStartingSession(separately: Bool, storeCalls: Int) async throws {
        let harness = try Harness(startsSessionsSeparately: separately)
        let signIn = try await harness.signIn()
        let callsBefore = harness.faults.callCount
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        // The token's lookup, then the rotation starting the session — or the rotation and the session's start.
        #expect(harness.faults.callCount - callsBefore == storeCalls)
        #expect(refreshed.status == 200)
        #expect(refreshed.authenticated == true)
        #expect(try await harness.sessionAuthenticates(refreshed.sessionID))
        #expect(try await !harness.sessionAuthenticates(signIn.sessionID))
        #expect(harness.observer.events.filter { $0.kind == .sessionStarted }.count == 2)
        #expect(harness.observer.events.contains { $0.kind == .refreshTokenRotated })
        #expect(await harness.refresh(try #require(refreshed.refreshToken), studioSession: true).authenticated == true)
    }

    @Test("A rotation starting a session that fails is a 503 that changes nothing: the same token works after")
    func rotationStartingSessionFailure() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let before = harness.memory.snapshot()
        harness.faults.failNext(.rotateRefreshToken)
        let failed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(failed.status == 503)
        #expect(failed.response.headers.count(of: "Set-Cookie") == 0)
        #expect(harness.memory.snapshot() == before)
        // The observer learns which call failed: the rotation that starts the session, which wrote nothing.
        let failures = harness.observer.events.filter { $0.kind == .backendFailed }.map(\.backendOperation?.rawValue)
        #expect(failures == ["rotate_refresh_token_starting_session"])
        #expect(try await harness.sessionAuthenticates(signIn.sessionID))
        let retried = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(retried.status == 200)
        #expect(retried.authenticated == true)
    }

    @Test("If the session cannot start, the rotated credential is still returned without a cookie")
    func sessionStartFailure() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        harness.faults.failNext(.replaceSession)
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(refreshed.status == 200)
        #expect(refreshed.authenticated == false)
        #expect(refreshed.response.headers.count(of: "Set-Cookie") == 0)
        let rotated = try #require(refreshed.refreshToken)
        #expect(try await harness.bearerAuthenticates(refreshed.accessToken))
        #expect(try await harness.sessionAuthenticates(signIn.sessionID))
        #expect(harness.observer.events.contains { $0.kind == .sessionStartFailed })
        // The rotation happened: the new token works, the old one is spent.
        #expect(await harness.refresh(rotated).status == 200)
    }

    @Test("An unused refresh token dies after the idle lifetime")
    func idleExpiry() async throws {
        let lifetimes = TokenLifetimes(refreshTokenIdle: .seconds(3600), refreshTokenAbsolute: .seconds(86_400))
        let harness = try Harness(configuration: EngineConfiguration(lifetimes: lifetimes))
        let signIn = try await harness.signIn()
        harness.clock.advance(by: 3599)
        let refreshed = await harness.refresh(try #require(signIn.refreshToken))
        #expect(refreshed.status == 200)
        harness.clock.advance(by: 3600)
        let expired = await harness.refresh(try #require(refreshed.refreshToken))
        #expect(expired.status == 400)
        #expect(expired.errorCode == "invalid_grant")
        #expect(harness.observer.refusals.last == .refreshTokenExpired)
    }

    @Test("The absolute lifetime survives rotation and caps expires_in and the cookie")
    func absoluteCap() async throws {
        let lifetimes = TokenLifetimes(
            accessToken: .seconds(900),
            refreshTokenIdle: .seconds(3600),
            refreshTokenAbsolute: .seconds(10_000),
            studioSession: .seconds(5000)
        )
        let harness = try Harness(configuration: EngineConfiguration(lifetimes: lifetimes))
        var token = try #require(try await harness.signIn().refreshToken)
        // Refresh every 50 minutes: each rotation would extend an idle-only lifetime forever.
        for _ in 0..<3 {
            harness.clock.advance(by: 3000)
            let refreshed = await harness.refresh(token, studioSession: true)
            #expect(refreshed.status == 200)
            token = try #require(refreshed.refreshToken)
        }
        // 9000 s in: 1000 s of the grant remain.
        harness.clock.advance(by: 500)
        let late = await harness.refresh(token, studioSession: true)
        #expect(late.status == 200)
        #expect(late.credential?["expires_in"] as? Int == 500)
        #expect(late.cookieAttributes["max-age"] == "500")
        harness.clock.advance(by: 500)
        let past = await harness.refresh(try #require(late.refreshToken))
        #expect(past.status == 400)
        #expect(harness.observer.refusals.last == .refreshTokenExpired)
        #expect(try await !harness.bearerAuthenticates(late.accessToken))
        #expect(try await !harness.sessionAuthenticates(late.sessionID))
    }

    @Test("Lifetimes are validated: idle no longer than absolute")
    func lifetimeValidation() {
        #expect(throws: ConfigurationError.self) {
            try TokenLifetimes(refreshTokenIdle: .seconds(100), refreshTokenAbsolute: .seconds(50)).validate()
        }
        #expect(throws: ConfigurationError.self) {
            try TokenLifetimes(studioSession: .seconds(34_560_001)).validate()
        }
        #expect(throws: ConfigurationError.self) {
            try TokenLifetimes(accessToken: .zero).validate()
        }
    }

    @Test("A malformed or unknown refresh token is refused without touching anything")
    func unknownToken() async throws {
        let harness = try Harness()
        _ = try await harness.signIn()
        let before = harness.memory.snapshot()
        for token in ["example", "tcr_" + String(repeating: "A", count: 43), String(repeating: "x", count: 47)] {
            let response = await harness.refresh(token)
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_grant")
        }
        #expect(harness.memory.snapshot() == before)
        #expect(harness.observer.revocations.isEmpty)
    }
}
