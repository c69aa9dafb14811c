// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules C-4 and R-2: codes and refresh tokens of another client are refused before they are consumed.
struct ClientBindingTests {
    private static let webConfiguration = EngineConfiguration(
        servedClient: "tilecast-web",
        callbackURI: Harness.webCallback
    )

    @Test(
        "A refresh token of another client is refused untouched, fires no reuse detection, and still rotates for its client"
    )
    func otherClientsRefreshToken() async throws {
        let harness = try Harness()
        let web = try await harness.engine.createGrant(
            account: Harness.account,
            client: "tilecast-web",
            scope: "tiles:read",
            startsSession: false
        )
        let token = web.credential.refreshToken.unredactedValue
        let before = harness.memory.snapshot()
        let refused = await harness.refresh(token)
        #expect(refused.status == 400)
        #expect(refused.errorCode == "invalid_grant")
        #expect(harness.observer.refusals.last == .refreshTokenOfAnotherClient)
        #expect(harness.memory.snapshot() == before)
        // Again: still no reuse detection, since nothing was consumed.
        #expect(await harness.refresh(token).status == 400)
        #expect(harness.observer.reuses.isEmpty)
        #expect(harness.observer.revocations.isEmpty)

        let webEngine = try harness.engine(serving: Self.webConfiguration)
        let rotated = await harness.refresh(token, clientID: "tilecast-web", on: webEngine)
        #expect(rotated.status == 200)
    }

    @Test("A code issued to another client is refused and not burned")
    func otherClientsCode() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(
            verifier: verifier,
            client: "tilecast-web",
            redirectURI: Harness.webCallback,
            scope: "profile"
        )
        let before = harness.memory.snapshot()
        // Presented at the iOS endpoint, with the iOS callback: the code's client decides.
        let refused = await harness.exchange(code: code, verifier: verifier)
        #expect(refused.status == 400)
        #expect(refused.errorCode == "invalid_grant")
        #expect(harness.observer.refusals.last == .codeIssuedToAnotherClient)
        #expect(harness.memory.snapshot() == before)

        let webEngine = try harness.engine(serving: Self.webConfiguration)
        let redeemed = await harness.exchange(
            code: code,
            verifier: verifier,
            redirectURI: Harness.webCallback,
            clientID: "tilecast-web",
            on: webEngine
        )
        #expect(redeemed.status == 200)
    }

    @Test(
        "A client_id other than the served client is invalid_client",
        arguments: ["tilecast-web", "TILECAST-IOS", "tilecast-ios "]
    )
    func otherClientID(clientID: String) async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let response = await harness.exchange(code: code, verifier: verifier, clientID: clientID)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_client")
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
    }
}
