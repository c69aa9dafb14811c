// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Secrets are stored only as digests and never printed.
struct SecretHygieneTests {
    @Test("The store never holds a raw code, token or session id")
    func storeHoldsDigestsOnly() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let signIn = await harness.exchange(code: code, verifier: verifier)
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        let secrets = [
            code, signIn.accessToken, signIn.refreshToken, signIn.sessionID, refreshed.accessToken,
            refreshed.refreshToken, refreshed.sessionID,
        ].compactMap { $0 }
        #expect(secrets.count == 7)

        var dumped = ""
        dump(harness.memory.snapshot(), to: &dumped)
        dumped += String(reflecting: harness.memory.snapshot())
        for secret in secrets {
            // The random part is what matters; the prefix is not secret.
            #expect(!dumped.contains(String(secret.dropFirst(4))))
        }
    }

    @Test("Requests, responses, events and errors never print a secret")
    func nothingPrintsSecrets() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let body =
            #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"\#(code)","redirect_uri":"\#(Harness.callback)","code_verifier":"\#(verifier)"}"#
        let request = EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json", "Cookie": "__Host-tilecast_session=tcs_secretcookie"],
            body: Array(body.utf8),
            peerAddress: "192.0.2.1"
        )
        let response = await harness.engine.handle(request: request)
        let parsed = TestResponse(response: response)
        let secrets = [code, verifier, "tcs_secretcookie", parsed.accessToken, parsed.refreshToken, parsed.sessionID]
            .compactMap { $0 }

        var texts = [
            String(describing: request), String(reflecting: request), String(describing: response),
            String(reflecting: response),
        ]
        var dumped = ""
        dump(request, to: &dumped)
        dump(response, to: &dumped)
        texts.append(dumped)
        for event in harness.observer.events {
            texts.append(String(describing: event))
            texts.append(String(reflecting: event))
        }
        // Replay and a refusal, so their events are printed too.
        _ = await harness.engine.handle(request: request)
        for event in harness.observer.events {
            texts.append(String(describing: event))
        }
        for text in texts {
            for secret in secrets {
                #expect(!text.contains(String(secret.dropFirst(4))), "\(text.prefix(60))")
            }
        }
    }

    @Test("One operation's secrets take one read of the random source, each its own bytes; refused requests take none")
    func randomReads() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        var before = harness.random.fillCount
        _ = await harness.exchange(code: code, verifier: harness.newVerifier())
        #expect(harness.random.fillCount == before + 1)  // the test's own verifier only
        before = harness.random.fillCount
        var bytesBefore = harness.random.bytesRead
        let signIn = await harness.exchange(code: code, verifier: verifier)
        #expect(harness.random.fillCount == before + 1)  // grant id, access token, refresh token, session
        #expect(harness.random.bytesRead == bytesBefore + 16 + 3 * 32)
        before = harness.random.fillCount
        bytesBefore = harness.random.bytesRead
        let refreshed = await harness.refresh(try #require(signIn.refreshToken), studioSession: true)
        #expect(harness.random.fillCount == before + 1)  // access token, refresh token, session
        #expect(harness.random.bytesRead == bytesBefore + 3 * 32)
        // Each secret its own bytes: no two share a value, nor any part of one.
        let secrets = [
            signIn.accessToken, signIn.refreshToken, signIn.sessionID, refreshed.accessToken,
            refreshed.refreshToken, refreshed.sessionID,
        ].compactMap { $0.map { String($0.dropFirst(4)) } }
        #expect(secrets.count == 6 && Set(secrets).count == 6)
        #expect(Set(secrets.map { $0.prefix(16) }).count == 6)
    }
}
