// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules and S-7: 403 for an account that is no longer active, decided before anything changes.
struct AccountStatusTests {
    @Test("A code of an inactive account gets 403 and is not consumed")
    func codeExchange() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.accounts.setStatus(.inactive, of: Harness.account)
        let before = harness.memory.snapshot()

        let response = await harness.exchange(code: code, verifier: verifier)
        #expect(response.status == 403)
        #expect(response.errorCode == "access_denied")
        #expect(response.json["error_description"] as? String == "The account is no longer active.")
        #expect(response.setCookies.isEmpty)
        #expect(response.credential == nil)
        #expect(harness.memory.snapshot() == before)

        harness.accounts.setStatus(.active, of: Harness.account)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
    }

    @Test("A refresh for an inactive account gets 403 and rotates nothing")
    func refresh() async throws {
        let harness = try Harness()
        let signIn = try await harness.signIn()
        harness.accounts.setStatus(.inactive, of: Harness.account)
        let before = harness.memory.snapshot()

        let response = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(response.status == 403)
        #expect(response.setCookies.isEmpty)
        #expect(response.credential == nil)
        #expect(harness.memory.snapshot() == before)
        #expect(try await !harness.sessionAuthenticates(signIn.sessionID))
        #expect(try await !harness.bearerAuthenticates(signIn.accessToken))

        harness.accounts.setStatus(.active, of: Harness.account)
        #expect(await harness.refresh(try #require(signIn.refreshToken)).status == 200)
    }

    @Test("An inactive account is not issued codes")
    func noCodes() async throws {
        let harness = try Harness()
        harness.accounts.setStatus(.inactive, of: Harness.account)
        await #expect(throws: IssuanceError.self) { try await harness.issueCode(verifier: harness.newVerifier()) }
    }
}
