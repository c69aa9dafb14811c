// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// A failing store becomes a 503 JSON error with nothing half-done.
struct BackendFailureTests {
    @Test(
        "Each failing store operation of a code exchange gives 503 and changes nothing; a retry then succeeds",
        arguments: [FaultInjectingStore.Operation.authorizationCode, .redeemCode]
    )
    func codeExchange(operation: FaultInjectingStore.Operation) async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let before = harness.memory.snapshot()
        harness.faults.failNext(operation)
        let failed = await harness.exchange(code: code, verifier: verifier)
        #expect(failed.status == 503)
        #expect(failed.errorCode == "temporarily_unavailable")
        #expect(failed.hasNoStoreJSONHeaders)
        #expect(harness.memory.snapshot() == before)
        #expect(harness.observer.events.contains { $0.kind == .backendFailed })
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
    }

    @Test(
        "Each failing store operation of a refresh gives 503 and changes nothing; a retry then succeeds",
        arguments: [FaultInjectingStore.Operation.refreshToken, .rotateRefreshToken]
    )
    func refresh(operation: FaultInjectingStore.Operation) async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let before = harness.memory.snapshot()
        harness.faults.failNext(operation)
        #expect(await harness.refresh(token).status == 503)
        #expect(harness.memory.snapshot() == before)
        #expect(await harness.refresh(token).status == 200)
    }

    @Test("A failing revocation after a replay gives 503; the replay, retried, still revokes")
    func revocationFailure() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        _ = await harness.exchange(code: code, verifier: verifier)
        harness.faults.failNext(.revokeGrant)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 503)
        #expect(harness.memory.snapshot().grants.values.first?.revocation == nil)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 400)
        #expect(harness.memory.snapshot().grants.values.first?.revocation?.reason == .codeReplayed)
    }

    @Test("A failing account directory gives 503 and changes nothing")
    func accountDirectoryFailure() async throws {
        struct DownDirectory: AccountDirectory {
            struct Down: Error {}
            func status(of account: AccountID) async throws -> AccountStatus { throw Down() }
        }
        let harness = try Harness()
        let store = harness.memory
        let engine = try AuthEngine(store: store, accounts: DownDirectory(), timeSource: harness.clock)
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let code = try await harness.insertCode(challenge: CodeChallenge.s256(for: verifier))
        let before = store.snapshot()
        let body =
            #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"\#(code.unredactedValue)","redirect_uri":"\#(Harness.callback)","code_verifier":"\#(verifier)"}"#
        let response = await engine.handle(
            request: EndpointRequest(
                method: "POST",
                headers: ["Content-Type": "application/json"],
                body: Array(body.utf8),
                peerAddress: nil
            )
        )
        #expect(response.status == 503)
        #expect(store.snapshot() == before)
        await #expect(throws: IssuanceError.self) {
            _ = try await engine.issueCode(
                account: "a",
                client: .tilecastIOS,
                redirectURI: Harness.callback,
                codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                codeChallengeMethod: "S256",
                scope: ""
            )
        }
    }
}
