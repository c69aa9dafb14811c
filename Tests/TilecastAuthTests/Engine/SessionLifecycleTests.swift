// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules S-1–S-8 and G-1–G-3: the Studio session belongs to the grant.
struct SessionLifecycleTests {
    @Test("Revoking the grant ends the session; the cookie, access token and refresh token all fail")
    func revokingEndsSession() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let grant = try #require(harness.memory.snapshot().grants.keys.first)

        let outcome = try await harness.engine.revokeGrant(grant)
        guard case .revoked(let revoked) = outcome else {
            Issue.record("expected .revoked, got \(outcome)")
            return
        }
        #expect(revoked.revocation?.reason == .revokedByServer)
        #expect(try await !harness.sessionAuthenticates(signIn.sessionID))
        #expect(try await !harness.bearerAuthenticates(signIn.accessToken))
        #expect(await harness.refresh(try #require(signIn.refreshToken)).status == 400)
        #expect(try await harness.engine.revokeGrant(grant) == .alreadyRevoked(revoked))
    }

    @Test("Signing the session out revokes the grant; the cookie, access token and refresh token all fail")
    func signOutRevokes() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let sessionID = try #require(signIn.sessionID)

        let outcome = try await harness.engine.signOut(sessionCookieValue: sessionID)
        guard case .signedOut(let grant) = outcome else {
            Issue.record("expected .signedOut, got \(outcome)")
            return
        }
        #expect(harness.memory.snapshot().grants[grant]?.revocation?.reason == .signedOut)
        #expect(try await !harness.sessionAuthenticates(sessionID))
        #expect(try await !harness.bearerAuthenticates(signIn.accessToken))
        let refreshed = await harness.refresh(try #require(signIn.refreshToken))
        #expect(refreshed.status == 400)
        #expect(harness.observer.refusals.last == .grantRevoked)
    }

    @Test("Signing out reads the configured cookie from the Cookie header")
    func signOutFromHeaders() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let sessionID = try #require(signIn.sessionID)
        let headers: HeaderFields = ["Cookie": "theme=dark; __Host-tilecast_session=\(sessionID)"]
        guard case .authenticated(let who) = try await harness.engine.authenticateSession(headers: headers) else {
            Issue.record("the cookie should authenticate")
            return
        }
        #expect(who.account == Harness.account)
        #expect(who.client == .tilecastIOS)
        #expect(try await harness.engine.signOut(headers: headers) == .signedOut(grant: who.grant))
        #expect(try await harness.engine.authenticateSession(headers: headers) == .unauthenticated(.revoked))
    }

    @Test("A cookie whose name differs in case, or two session cookies, do not authenticate")
    func cookieNameExact() async throws {
        let harness = try Harness()
        let sessionID = try #require(try await harness.signIn().sessionID)
        let lowercase: HeaderFields = ["Cookie": "__host-tilecast_session=\(sessionID)"]
        #expect(try await harness.engine.authenticateSession(headers: lowercase) == .unauthenticated(.missing))
        let twice: HeaderFields = [
            "Cookie": "__Host-tilecast_session=\(sessionID); __Host-tilecast_session=\(sessionID)"
        ]
        #expect(try await harness.engine.authenticateSession(headers: twice) == .unauthenticated(.ambiguous))
    }

    @Test("Signing out an unknown or malformed cookie changes nothing")
    func signOutUnknown() async throws {
        let harness = try Harness()
        _ = try await harness.signIn()
        let before = harness.memory.snapshot()
        #expect(try await harness.engine.signOut(sessionCookieValue: "nonsense") == .notSignedIn)
        #expect(
            try await harness.engine.signOut(sessionCookieValue: "tcs_" + String(repeating: "A", count: 43))
                == .notSignedIn
        )
        #expect(harness.memory.snapshot() == before)
    }

    @Test("A session expires with its lifetime; the Max-Age says when")
    func sessionExpiry() async throws {
        let harness = try Harness(
            configuration: EngineConfiguration(lifetimes: TokenLifetimes(studioSession: .seconds(3600)))
        )
        let signIn = try await harness.signIn()
        #expect(signIn.cookieAttributes["max-age"] == "3600")
        harness.clock.advance(by: 3599)
        #expect(try await harness.sessionAuthenticates(signIn.sessionID))
        harness.clock.advance(by: 1)
        #expect(
            try await harness.engine.authenticateSession(cookieValue: try #require(signIn.sessionID))
                == .unauthenticated(.expired)
        )
    }

    @Test("Bearer authentication takes the scheme case-insensitively and nothing else")
    func bearerParsing() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().accessToken)
        for header in ["Bearer \(token)", "bearer \(token)", "BEARER \(token)"] {
            guard case .authenticated = try await harness.engine.authenticateBearer(authorization: header) else {
                Issue.record("\(header.prefix(7)) should authenticate")
                continue
            }
        }
        for header in ["Basic \(token)", token, "Bearer  \(token)", "Bearer"] {
            #expect(try await harness.engine.authenticateBearer(authorization: header) == .unauthenticated(.malformed))
        }
        #expect(try await harness.engine.authenticateBearer(authorization: nil) == .unauthenticated(.missing))
        harness.clock.advance(by: 900)
        #expect(try await harness.engine.authenticateAccessToken(token) == .unauthenticated(.expired))
    }

    @Test("A replaced session never authenticates or signs out, even from a store that kept its record")
    func replacedSessionKeptByStore() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let sessionID = try #require(signIn.sessionID)
        let digest = try #require(OpaqueToken(presented: sessionID, as: .studioSession)).digest
        harness.faults.keepAnsweringForReplacedSession(try #require(try await harness.memory.session(digest)))
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(refreshed.status == 200)

        #expect(try await harness.engine.authenticateSession(cookieValue: sessionID) == .unauthenticated(.notFound))
        let before = harness.memory.snapshot()
        #expect(try await harness.engine.signOut(sessionCookieValue: sessionID) == .notSignedIn)
        #expect(harness.memory.snapshot() == before)
        #expect(try await harness.sessionAuthenticates(refreshed.sessionID))
    }

    @Test("The app signs out with its refresh or access token, which revokes the grant and its session")
    func nativeSignOut() async throws {
        for useRefreshToken in [true, false] {
            let harness = try Harness()
            let signIn = try await harness.signIn()
            let token = try #require(useRefreshToken ? signIn.refreshToken : signIn.accessToken)
            guard case .signedOut(let grant) = try await harness.engine.signOut(token: token, client: .tilecastIOS)
            else {
                Issue.record("the token should sign out")
                continue
            }
            #expect(harness.memory.snapshot().grants[grant]?.revocation?.reason == .signedOut)
            #expect(try await !harness.sessionAuthenticates(signIn.sessionID))
            #expect(try await !harness.bearerAuthenticates(signIn.accessToken))
            #expect(await harness.refresh(try #require(signIn.refreshToken)).status == 400)
        }
    }

    @Test("Signing out with a rotated refresh token is reuse: the grant is revoked as reused, and the event raised")
    func nativeSignOutWithRotatedTokenIsReuse() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let stolen = try #require(signIn.refreshToken)
        let refreshed = await harness.refresh(stolen, studioSession: true)
        #expect(refreshed.status == 200)

        let outcome = try await harness.engine.signOut(token: stolen, client: .tilecastIOS, peerAddress: "203.0.113.9")
        guard case .signedOut(let grant) = outcome else {
            Issue.record("a rotated token of a live grant revokes it: \(outcome)")
            return
        }
        #expect(harness.memory.snapshot().grants[grant]?.revocation?.reason == .refreshTokenReused)
        #expect(harness.observer.reuses == [grant])
        #expect(
            harness.observer.events.contains {
                $0.kind == .refreshTokenReuseDetected && $0.peerAddress == "203.0.113.9"
            }
        )
        #expect(try await !harness.sessionAuthenticates(refreshed.sessionID))
        #expect(await harness.refresh(try #require(refreshed.refreshToken)).status == 400)

        // Signing out again with it is idempotent and raises nothing more.
        #expect(try await harness.engine.signOut(token: stolen, client: .tilecastIOS) == .signedOut(grant: grant))
        #expect(harness.observer.reuses == [grant])
    }

    @Test("Within the reuse leeway the previous refresh token signs out as the app's own, without a reuse event")
    func nativeSignOutWithinLeeway() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))
        let signIn = try await harness.signIn()
        let previous = try #require(signIn.refreshToken)
        _ = await harness.refresh(previous)  // the response is lost; the app still holds `previous`
        harness.clock.advance(by: 3)
        guard case .signedOut(let grant) = try await harness.engine.signOut(token: previous, client: .tilecastIOS)
        else {
            Issue.record("the app's previous token within the leeway should sign out")
            return
        }
        #expect(harness.memory.snapshot().grants[grant]?.revocation?.reason == .signedOut)
        #expect(harness.observer.reuses.isEmpty)
    }

    @Test("Native sign-out refuses another client's token, an expired token and nonsense, changing nothing")
    func nativeSignOutRefusals() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        let web = try await harness.engine.createGrant(
            account: Harness.account,
            client: "tilecast-web",
            scope: "profile",
            startsSession: true
        )
        let before = harness.memory.snapshot()
        let webToken = web.credential.refreshToken.unredactedValue
        #expect(try await harness.engine.signOut(token: webToken, client: .tilecastIOS) == .notSignedIn)
        #expect(try await harness.engine.signOut(token: "tcr_nonsense", client: .tilecastIOS) == .notSignedIn)
        harness.clock.advance(by: 900)
        let expired = try #require(signIn.accessToken)
        #expect(try await harness.engine.signOut(token: expired, client: .tilecastIOS) == .notSignedIn)
        #expect(harness.memory.snapshot() == before)
        #expect(
            try await harness.engine.signOut(token: webToken, client: "tilecast-web") == .signedOut(grant: web.grant)
        )
    }

    @Test("Revoking all of an account's grants revokes exactly those, with their sessions and tokens")
    func revokeAllGrants() async throws {
        let harness = try Harness()
        let first = try await harness.signIn()
        let second = try await harness.signIn()
        let other = try await harness.signIn(account: "account-8")
        let revoked = try await harness.engine.revokeAllGrants(of: Harness.account)
        #expect(revoked.count == 2)
        for response in [first, second] {
            #expect(try await !harness.sessionAuthenticates(response.sessionID))
            #expect(try await !harness.bearerAuthenticates(response.accessToken))
        }
        #expect(try await harness.sessionAuthenticates(other.sessionID))
        #expect(try await harness.engine.revokeAllGrants(of: Harness.account).isEmpty)
        #expect(harness.observer.revocations.count == 2)
    }

    @Test("The account page lists the account's grants")
    func grantsOfAccount() async throws {
        let harness = try Harness()
        _ = try await harness.signIn()
        _ = try await harness.signIn()
        _ = try await harness.signIn(account: "account-8")
        #expect(try await harness.engine.grants(of: Harness.account).count == 2)
    }
}
