// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// The authorize step's redirect, built by the library (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207 §2): what the
/// app's callback receives must be exactly what was meant, whatever the `state` holds.
struct AuthorizationResponseTests {
    static func parameters(of location: String) -> [String: String] {
        let items = URLComponents(string: location)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    @Test("Success carries code, state and iss, each decoding to exactly what was given")
    func success() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let issued = try await harness.issue(verifier: verifier)
        let state = "a&code=tca_forged#frag ment+%41é"
        let response = AuthorizationResponse.success(
            issued,
            redirectURI: Harness.callback,
            state: state,
            issuer: "https://tilecast.test"
        )
        #expect(response.location.hasPrefix("tilecast-ios://oauth/callback?code="))
        let parameters = Self.parameters(of: response.location)
        #expect(parameters == ["code": issued.code.unredactedValue, "state": state, "iss": "https://tilecast.test"])
        #expect(!response.location.contains("#"))
        // The code redeems from what the callback received.
        let exchange = await harness.exchange(code: try #require(parameters["code"]), verifier: verifier)
        #expect(exchange.status == 200)
    }

    @Test("No state, no iss: neither parameter is sent")
    func optionalParameters() throws {
        let response = AuthorizationResponse.error(
            .accessDenied,
            redirectURI: "https://studio.tilecast.test/callback",
            state: nil,
            issuer: nil
        )
        #expect(response.location == "https://studio.tilecast.test/callback?error=access_denied")
    }

    @Test("A redirect URI's own query is kept and a fragment dropped")
    func existingQueryAndFragment() {
        let response = AuthorizationResponse.error(
            .invalidScope,
            description: "Scope \"admin\" is not allowed\\",
            redirectURI: "https://app.test/cb?tenant=7#section",
            state: "s",
            issuer: nil
        )
        #expect(
            response.location
                == "https://app.test/cb?tenant=7&error=invalid_scope&error_description=Scope%20%20admin%20%20is%20not%20allowed%20&state=s"
        )
    }

    @Test("An issuance error redirects only when it may (RFC 6749 §4.1.2.1)")
    func issuanceErrors() {
        #expect(AuthorizationResponse.error(.unknownClient, redirectURI: "x:/", state: "s", issuer: nil) == nil)
        #expect(
            AuthorizationResponse.error(.unregisteredRedirectURI, redirectURI: "x:/", state: "s", issuer: nil) == nil
        )
        let scope = AuthorizationResponse.error(.invalidScope, redirectURI: "x:/", state: "s", issuer: "https://i")
        #expect(
            scope?.location
                == "x:/?error=invalid_scope&error_description=The%20scope%20holds%20a%20value%20this%20client%20may%20not%20have.&state=s&iss=https%3A%2F%2Fi"
        )
    }

    @Test("Every issuance error that redirects carries an error_description (RFC 6749 §4.1.2.1)")
    func issuanceErrorsDescribeThemselves() {
        let redirecting: [IssuanceError] = [
            .missingCodeChallenge, .unsupportedCodeChallengeMethod, .malformedCodeChallenge, .invalidScope,
            .accountInactive, .accountRevoked, .backendFailed(CancellationError()),
        ]
        for error in redirecting {
            let location = AuthorizationResponse.error(error, redirectURI: "x:/", state: nil, issuer: nil)?.location
            #expect(location?.contains("&error_description=") == true, "\(error): \(location ?? "no redirect")")
            #expect(location?.contains("Cancellation") == false, "a backend error's text stays out of the redirect")
        }
    }
}
