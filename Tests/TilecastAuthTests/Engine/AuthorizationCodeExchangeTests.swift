// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Behaviours 1 and 2: the `authorization_code` exchange and the credential it returns.
struct AuthorizationCodeExchangeTests {
    @Test("A valid exchange creates the grant, starts a session and sets exactly one cookie")
    func success() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let response = await harness.exchange(code: code, verifier: verifier)

        #expect(response.status == 200)
        #expect(response.authenticated == true)
        #expect(response.setCookies.count == 1)
        #expect(response.hasNoStoreJSONHeaders)
        let snapshot = harness.memory.snapshot()
        #expect(snapshot.grants.count == 1)
        #expect(snapshot.sessions.count == 1)
        #expect(try await harness.sessionAuthenticates(response.sessionID))
        #expect(try await harness.bearerAuthenticates(response.accessToken))
    }

    @Test("The credential carries token_type, access_token, expires_in, refresh_token and scope")
    func credentialShape() async throws {
        let harness = try Harness()
        let response = try await harness.signIn()
        let credential = try #require(response.credential)
        #expect(credential["token_type"] as? String == "Bearer")
        #expect((credential["access_token"] as? String)?.hasPrefix("tca_") == true)
        #expect(credential["expires_in"] as? Int == 900)
        #expect((credential["refresh_token"] as? String)?.hasPrefix("tcr_") == true)
        #expect(credential["scope"] as? String == Harness.scope)
        #expect(Set(credential.keys) == ["token_type", "access_token", "expires_in", "refresh_token", "scope"])
        #expect(Set(try #require(response.data).keys) == ["authenticated", "credential"])
    }

    @Test("studio_session is ignored by a code exchange: the cookie is always set", arguments: [true, false])
    func studioSessionIgnored(studioSession: Bool) async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let response = await harness.exchange(code: code, verifier: verifier, extra: ["studio_session": studioSession])
        #expect(response.status == 200)
        #expect(response.authenticated == true)
        #expect(response.setCookies.count == 1)
    }

    @Test("A server released before native API access omits the credential but still sets the cookie")
    func withoutNativeCredential() async throws {
        let harness = try Harness(configuration: EngineConfiguration(issuesNativeCredential: false))
        let response = try await harness.signIn()
        #expect(response.status == 200)
        #expect(response.authenticated == true)
        #expect(response.credential == nil)
        #expect(response.data?.keys.contains("credential") == false)
        #expect(response.setCookies.count == 1)
        #expect(try await harness.sessionAuthenticates(response.sessionID))
        let snapshot = harness.memory.snapshot()
        #expect(snapshot.accessTokens.isEmpty)
        #expect(snapshot.refreshTokens.isEmpty)
    }

    @Test("The verifier must match the stored S256 challenge; a mismatch does not burn the code")
    func verifierMismatch() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let before = harness.memory.snapshot()
        let wrong = await harness.exchange(code: code, verifier: harness.newVerifier())
        #expect(wrong.status == 400)
        #expect(wrong.errorCode == "invalid_grant")
        #expect(harness.observer.refusals.last == .codeVerifierMismatch)
        #expect(harness.memory.snapshot() == before)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
    }

    @Test(
        "redirect_uri must be the callback byte for byte",
        arguments: [
            "tilecast-ios://oauth/callback/", "TILECAST-IOS://oauth/callback", "tilecast-ios://oauth/Callback",
            "tilecast-ios://oauth/callback?x=1", "tilecast-ios://oauth/%63allback", "https://example.com",
            "tilecast-ios://oauth/callbac\u{212A}",
        ]
    )
    func redirectMismatch(redirectURI: String) async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let before = harness.memory.snapshot()
        let response = await harness.exchange(code: code, verifier: verifier, redirectURI: redirectURI)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_grant")
        #expect(harness.memory.snapshot() == before)
    }

    @Test("redirect_uri must also be the URI stored with the code")
    func storedRedirectMismatch() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        // A code whose stored redirect URI is not the callback (written straight to the store).
        let code = try await harness.insertCode(
            challenge: CodeChallenge.s256(for: verifier),
            redirectURI: "tilecast-ios://oauth/other"
        )
        let response = await harness.exchange(code: code.unredactedValue, verifier: verifier)
        #expect(response.status == 400)
        #expect(harness.observer.refusals.last == .redirectURIMismatch)
    }

    @Test(
        "A code stored without an S256 challenge is never redeemable",
        arguments: [
            nil, CodeChallenge(method: .plain, value: String(repeating: "v", count: 43)),
            CodeChallenge(
                method: CodeChallenge.Method(rawValue: "s256"),
                value: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
            ),
        ]
    )
    func codeWithoutS256(challenge: CodeChallenge?) async throws {
        let harness = try Harness()
        let code = try await harness.insertCode(challenge: challenge)
        for verifier in [String(repeating: "v", count: 43), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"] {
            let response = await harness.exchange(code: code.unredactedValue, verifier: verifier)
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_grant")
        }
        #expect(harness.observer.refusals.allSatisfy { $0 == .codeWithoutS256Challenge })
    }

    @Test("A code expires after 60 seconds by default")
    func defaultExpiry() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.clock.advance(by: 60)
        let response = await harness.exchange(code: code, verifier: verifier)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_grant")
        #expect(harness.observer.refusals.last == .codeExpired)

        let fresh = harness.newVerifier()
        let second = try await harness.issueCode(verifier: fresh)
        harness.clock.advance(by: 59)
        #expect(await harness.exchange(code: second, verifier: fresh).status == 200)
    }

    @Test("The code lifetime is configurable up to 600 seconds and no further")
    func configurableExpiry() async throws {
        let lifetimes = TokenLifetimes(authorizationCode: .seconds(600))
        let harness = try Harness(configuration: EngineConfiguration(lifetimes: lifetimes))
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.clock.advance(by: 599)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)

        let outOfRange = ConfigurationError.lifetimeOutOfRange(
            .authorizationCode,
            minimum: .seconds(1),
            maximum: .seconds(600)
        )
        #expect(outOfRange.description == "The authorization code lifetime must be from 1 s to 600 s.")
        #expect(throws: outOfRange) {
            try EngineConfiguration(lifetimes: TokenLifetimes(authorizationCode: .seconds(601))).validate()
        }
    }

    @Test("If the session cannot start nothing is issued, and the same code can be retried")
    func sessionStartFailure() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let before = harness.memory.snapshot()
        harness.faults.failNext(.redeemCode)
        let failed = await harness.exchange(code: code, verifier: verifier)
        #expect(failed.status == 503)
        #expect(failed.errorCode == "temporarily_unavailable")
        #expect(failed.setCookies.isEmpty)
        #expect(failed.credential == nil)
        #expect(harness.memory.snapshot() == before)

        let retried = await harness.exchange(code: code, verifier: verifier)
        #expect(retried.status == 200)
        #expect(retried.setCookies.count == 1)
    }

    @Test("The scope of the code is the scope of the grant")
    func scopeCarried() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier, scope: "tiles:write")
        let response = await harness.exchange(code: code, verifier: verifier)
        #expect(response.credential?["scope"] as? String == "tiles:write")
    }
}
