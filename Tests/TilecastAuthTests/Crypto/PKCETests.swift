// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct PKCETests {
    @Test(
        "Verifiers of 43 to 128 unreserved characters are well formed (RFC 7636 §4.1)",
        arguments: [
            String(repeating: "a", count: 43), String(repeating: "Z", count: 128),
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ-._~0123456789",
        ]
    )
    func wellFormed(verifier: String) {
        #expect(PKCE.isWellFormedVerifier(JSONText(verifier)))
    }

    @Test(
        "Other verifiers are refused",
        arguments: [
            "", "example", String(repeating: "a", count: 42), String(repeating: "a", count: 129),
            String(repeating: "a", count: 42) + "+", String(repeating: "a", count: 42) + " ",
            String(repeating: "a", count: 42) + "é", String(repeating: "a", count: 42) + "/",
        ]
    )
    func malformed(verifier: String) {
        #expect(!PKCE.isWellFormedVerifier(JSONText(verifier)))
    }
}
