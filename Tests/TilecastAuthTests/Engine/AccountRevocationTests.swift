// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// `revokeAllGrants(of:)` — a password change, a suspension — must end what was under way too: a code
/// approved and kept back by someone who knew the old password, and an exchange or sign-in racing the
/// revocation (RFC 9700 §4.14.2). An outside review found both surviving it.
struct AccountRevocationTests {
    @Test("A code approved before revokeAllGrants is refused after it, and creates nothing")
    func bankedCodeIsRefused() async throws {
        let harness = try Harness()
        let signedIn = try await harness.signIn()
        let verifier = harness.newVerifier()
        let banked = try await harness.issueCode(verifier: verifier)
        harness.clock.advance(by: 1)

        #expect(try await harness.engine.revokeAllGrants(of: Harness.account).count == 1)
        harness.clock.advance(by: 30)
        let before = harness.memory.snapshot()
        let exchange = await harness.exchange(code: banked, verifier: verifier)

        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "invalid_grant")
        #expect(exchange.accessToken == nil && exchange.sessionID == nil)
        #expect(harness.memory.snapshot() == before)
        #expect(try await !harness.bearerAuthenticates(signedIn.accessToken))
        #expect(try await harness.engine.grants(of: Harness.account).allSatisfy { $0.revocation != nil })

        // A sign-in after the revocation works as ever.
        harness.clock.advance(by: 1)
        #expect(try await harness.signIn().status == 200)
    }

    @Test("A grant whose sign-in began before revokeAllGrants is refused with accountRevoked")
    func grantCreatedBeforeRevocationIsRefused() async throws {
        let harness = try Harness()
        let startedAt = harness.clock.now()
        harness.clock.advance(by: 2)
        _ = try await harness.engine.revokeAllGrants(of: Harness.account)

        // The web login verified the old password at `startedAt` and reaches createGrant only now, on an
        // instance whose clock still says `startedAt`.
        harness.clock.set(startedAt)
        await #expect(throws: IssuanceError.self) {
            _ = try await harness.engine.createGrant(
                account: Harness.account,
                client: "tilecast-web",
                scope: "profile",
                startsSession: true
            )
        }
        #expect(try await harness.engine.grants(of: Harness.account).isEmpty)
        #expect(
            IssuanceError.accountRevoked.mayRedirect && IssuanceError.accountRevoked.oauthErrorCode == .accessDenied
        )
    }

    @Test("A device approved with the old password gets no grant by polling after revokeAllGrants")
    func deviceApprovedBeforeRevocation() async throws {
        // Found by a review: the engine stamped the grant with the time of createGrant, so only a sign-in
        // racing the revocation by microseconds was refused.
        let harness = try Harness()
        let approvedAt = harness.clock.now()
        harness.clock.advance(by: 1)
        _ = try await harness.engine.revokeAllGrants(of: Harness.account)
        harness.clock.advance(by: 5)
        await #expect(throws: IssuanceError.self) {
            _ = try await harness.engine.createGrant(
                account: Harness.account,
                client: "tilecast-cli",
                scope: "tiles:read",
                startsSession: false,
                authenticatedAt: approvedAt
            )
        }
        #expect(try await harness.engine.grants(of: Harness.account).isEmpty)
        // Approved after the revocation, it is granted.
        let approvedAfter = harness.clock.now()
        harness.clock.advance(by: 5)
        let issued = try await harness.engine.createGrant(
            account: Harness.account,
            client: "tilecast-cli",
            scope: "tiles:read",
            startsSession: false,
            authenticatedAt: approvedAfter
        )
        #expect(try await harness.bearerAuthenticates(issued.credential.accessToken.unredactedValue))
    }

    @Test("A code whose approval was authenticated before revokeAllGrants never redeems, though issued after")
    func codeAuthenticatedBeforeRevocation() async throws {
        let harness = try Harness()
        let authenticatedAt = harness.clock.now()
        harness.clock.advance(by: 1)
        _ = try await harness.engine.revokeAllGrants(of: Harness.account)
        harness.clock.advance(by: 1)
        let verifier = harness.newVerifier()
        let issued = try await harness.issue(verifier: verifier, authenticatedAt: authenticatedAt)
        // The code's lifetime still runs from its issue.
        #expect(issued.expiresAt == harness.clock.now().addingTimeInterval(60))
        let exchange = await harness.exchange(code: issued.code.unredactedValue, verifier: verifier)
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "invalid_grant")
    }

    @Test("400 exchanges racing revokeAllGrants: each is refused, or its grant is revoked with the rest")
    func exchangesRacingTheRevocation() async throws {
        let harness = try Harness()
        var refused = 0
        var revokedAfterSuccess = 0
        for _ in 0..<400 {
            let verifier = harness.newVerifier()
            let code = try await harness.issueCode(verifier: verifier)
            async let exchange = harness.exchange(code: code, verifier: verifier)
            async let revocation = harness.engine.revokeAllGrants(of: Harness.account)
            let (response, _) = try await (exchange, revocation)
            switch response.status {
            case 200:
                #expect(try await !harness.bearerAuthenticates(response.accessToken))
                #expect(try await !harness.sessionAuthenticates(response.sessionID))
                revokedAfterSuccess += 1
            default:
                #expect(response.status == 400 && response.errorCode == "invalid_grant")
                refused += 1
            }
            #expect(try await harness.engine.grants(of: Harness.account).allSatisfy { $0.revocation != nil })
        }
        #expect(refused + revokedAfterSuccess == 400)
    }
}
