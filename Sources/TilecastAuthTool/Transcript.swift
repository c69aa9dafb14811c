// SPDX-License-Identifier: Apache-2.0

import TilecastAuth
import TilecastAuthConformance

/// Prints HTTP exchanges the way a developer reads them, with every secret shortened.
///
/// The demo's secrets live in an in-memory store that dies with the process, but the project's rule is
/// that no secret is ever printed, so codes, tokens, session ids and the PKCE verifier appear as their
/// prefix and first six characters.
struct Transcript {
    private(set) var failures: [String] = []
    /// Values that are secret but carry no recognisable prefix, such as the PKCE verifier.
    var extraSecrets: [String] = []

    mutating func step(_ title: String) {
        print("\n== \(title)")
    }

    func note(_ text: String) {
        print("   \(text)")
    }

    func exchange(_ request: EndpointRequest, path: String, _ response: EndpointResponse) {
        print("→ \(request.method) \(path)")
        for field in request.headers.fields {
            print("  \(field.name): \(shorten(field.value))")
        }
        print("  \(shorten(String(decoding: request.body, as: UTF8.self)))")
        print("← \(response.status)")
        for field in response.headers.fields {
            print("  \(field.name): \(shorten(field.value))")
        }
        print("  \(shorten(String(decoding: response.body, as: UTF8.self)))")
    }

    /// Records whether an expectation of the walkthrough held.
    mutating func check(_ condition: Bool, _ what: String) {
        print("   \(condition ? "✓" : "✗") \(what)")
        if !condition {
            failures.append(what)
        }
    }

    /// Replaces every secret in `text` with its prefix and first six characters.
    func shorten(_ text: String) -> String {
        SecretShortener(extraSecrets: extraSecrets).shorten(text)
    }
}
