// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// The authorize step's `issueCode`: PKCE S256 is mandatory and the client's registration decides.
struct IssueCodeTests {
    private static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    private func issue(
        _ harness: Harness,
        client: ClientID = .tilecastIOS,
        redirectURI: String = Harness.callback,
        challenge: String? = challenge,
        method: String? = "S256",
        scope: String = "profile"
    ) async -> IssuanceError? {
        do {
            _ = try await harness.engine.issueCode(
                account: Harness.account,
                client: client,
                redirectURI: redirectURI,
                codeChallenge: challenge,
                codeChallengeMethod: method,
                scope: scope
            )
            return nil
        } catch {
            return error
        }
    }

    @Test("A valid request issues a code that expires with the configured lifetime")
    func valid() async throws {
        let harness = try Harness()
        let issued = try await harness.engine.issueCode(
            account: Harness.account,
            client: .tilecastIOS,
            redirectURI: Harness.callback,
            codeChallenge: Self.challenge,
            codeChallengeMethod: "S256",
            scope: "profile tiles:read"
        )
        #expect(issued.code.unredactedValue.hasPrefix("tcc_"))
        #expect(issued.expiresAt == harness.clock.now().addingTimeInterval(60))
        let stored = try #require(harness.memory.snapshot().codes[issued.code.digest])
        #expect(stored.challenge == CodeChallenge(method: .s256, value: Self.challenge))
        #expect(stored.redemption == nil)
    }

    @Test("Every refusal has the right error, and only client and redirect errors forbid a redirect")
    func refusals() async throws {
        let harness = try Harness()
        let unknownClient = await issue(harness, client: "tilecast-tv")
        #expect(unknownClient?.mayRedirect == false)
        #expect(unknownClient?.oauthErrorCode == .invalidClient)
        let badRedirect = await issue(harness, redirectURI: Harness.callback + "/")
        #expect(badRedirect?.mayRedirect == false)
        let noChallenge = await issue(harness, challenge: nil)
        #expect(noChallenge?.oauthErrorCode == .invalidRequest)
        #expect(noChallenge?.mayRedirect == true)
        let plain = await issue(harness, method: "plain")
        #expect(plain?.oauthErrorCode == .invalidRequest)
        let noMethod = await issue(harness, method: nil)
        #expect(noMethod?.oauthErrorCode == .invalidRequest)
        let lowercase = await issue(harness, method: "s256")
        #expect(lowercase?.oauthErrorCode == .invalidRequest)
        let short = await issue(harness, challenge: "abc")
        #expect(short?.oauthErrorCode == .invalidRequest)
        let badScope = await issue(harness, scope: "admin")
        #expect(badScope?.oauthErrorCode == .invalidScope)
        let malformedScope = await issue(harness, scope: "profile  tiles:read")
        #expect(malformedScope?.oauthErrorCode == .invalidScope)
        #expect(harness.memory.snapshot().codes.isEmpty)
    }
}
