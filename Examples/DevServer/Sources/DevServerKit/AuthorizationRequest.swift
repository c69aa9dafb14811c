// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// An authorization request's parameters (RFC 6749 §4.1.1, RFC 7636 §4.3), checked in the order
/// RFC 6749 §4.1.2.1 needs: client and redirect URI first — an error there gets an error page, never a
/// redirect, since the URI cannot be trusted — then the rest, whose errors go back to the callback.
struct AuthorizationRequest {
    /// Why a request was refused, and how to answer.
    enum Refusal: Error {
        /// An error page, no redirect.
        case page(String)
        /// A redirect to the callback with `error` (and `state`).
        case redirect(uri: String, error: OAuthErrorCode, description: String, state: String?)
    }

    let client: ClientID
    let redirectURI: String
    let codeChallenge: String
    let codeChallengeMethod: String
    let scope: String
    let state: String?

    /// The parameters the authorize form carries to its post: exactly these, validated — never whatever
    /// else the query held.
    var formFields: [(name: String, value: String)] {
        [
            ("response_type", "code"), ("client_id", client.rawValue), ("redirect_uri", redirectURI),
            ("code_challenge", codeChallenge), ("code_challenge_method", codeChallengeMethod), ("scope", scope),
        ] + (state.map { [("state", $0)] } ?? [])
    }

    /// What a form token for this request is bound to: a token minted for one request cannot approve
    /// another.
    var formPurpose: String {
        ["authorize", client.rawValue, redirectURI, codeChallenge, scope, state ?? ""].joined(separator: "\u{0}")
    }

    /// Whether `challenge` is what BASE64URL(SHA256(verifier)) gives: 43 characters of the base64url
    /// alphabet whose last one carries no bits beyond the 256 (RFC 7636 §4.2, RFC 4648 §5).
    static func isS256Challenge(_ challenge: String) -> Bool {
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        let scalars = Array(challenge.unicodeScalars)
        guard scalars.count == 43, scalars.allSatisfy({ alphabet.unicodeScalars.contains($0) }) else { return false }
        return "AEIMQUYcgkosw048".unicodeScalars.contains(scalars[42])
    }

    /// Reads and checks `parameters` against the registered `clients`.
    init(_ parameters: [(name: String, value: String)], clients: [Client]) throws(Refusal) {
        func values(_ name: String) -> [String] { parameters.filter { $0.name == name }.map(\.value) }
        // RFC 6749 §3.1: parameters sent without a value are treated as omitted; none may repeat.
        func single(_ name: String) -> String? { values(name).first.flatMap { $0.isEmpty ? nil : $0 } }

        guard values("client_id").count <= 1, let clientID = single("client_id") else {
            throw .page("The request has no client_id, or more than one.")
        }
        guard let client = clients.first(where: { $0.id.rawValue == clientID }) else {
            throw .page("No client is registered as \(clientID).")
        }
        guard values("redirect_uri").count <= 1, let redirectURI = single("redirect_uri") else {
            throw .page("The request has no redirect_uri, or more than one.")
        }
        // Byte for byte (RFC 6749 §3.1.2.3 via simple string comparison): Swift's `==` would also match a
        // canonically equivalent URI with other bytes.
        guard client.redirectURIs.contains(where: { Array($0.utf8) == Array(redirectURI.utf8) }) else {
            throw .page("\(redirectURI) is not a redirect URI registered for \(clientID).")
        }
        let state = single("state")
        func refuse(_ error: OAuthErrorCode, _ description: String) -> Refusal {
            .redirect(uri: redirectURI, error: error, description: description, state: state)
        }
        for name in ["response_type", "code_challenge", "code_challenge_method", "scope", "state"]
        where values(name).count > 1 {
            throw refuse(.invalidRequest, "\(name) is repeated.")
        }
        guard let responseType = single("response_type") else {
            throw refuse(.invalidRequest, "response_type is required.")
        }
        guard responseType == "code" else {
            throw refuse(.unsupportedResponseType, "Only response_type=code is supported.")
        }
        guard let challenge = single("code_challenge") else {
            throw refuse(.invalidRequest, "code_challenge is required (PKCE).")
        }
        // RFC 7636 §4.4.1: a missing method means plain, which is not accepted.
        guard single("code_challenge_method") == "S256" else {
            throw refuse(.invalidRequest, "code_challenge_method must be S256.")
        }
        // Checked here, before anyone signs in, not only when the code is issued (RFC 7636 §4.4.1).
        guard Self.isS256Challenge(challenge) else {
            throw refuse(.invalidRequest, "code_challenge must be 43 base64url characters: an S256 digest.")
        }
        let scope = single("scope") ?? ""
        let tokens = scope.split(separator: " ", omittingEmptySubsequences: false)
        guard scope.isEmpty || tokens.allSatisfy({ client.allowedScopeTokens.contains(String($0)) }) else {
            throw refuse(.invalidScope, "The scope holds a value this client may not have.")
        }
        self.client = client.id
        self.redirectURI = redirectURI
        self.codeChallenge = challenge
        self.codeChallengeMethod = "S256"
        self.scope = scope
        self.state = state
    }
}
