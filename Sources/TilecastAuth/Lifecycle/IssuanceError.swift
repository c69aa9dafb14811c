// SPDX-License-Identifier: Apache-2.0

/// Why the engine would not issue a code or create a grant.
///
/// An authorize endpoint maps these to RFC 6749 §4.1.2.1 responses: for ``unknownClient`` and
/// ``unregisteredRedirectURI`` it must show an error page and **not** redirect (the redirect URI cannot
/// be trusted); for the others it redirects to the callback with ``oauthErrorCode``.
public enum IssuanceError: Error {
    /// No registered client has this id.
    case unknownClient
    /// The redirect URI is not one the client registered, byte for byte (RFC 6749 §3.1.2.3).
    case unregisteredRedirectURI
    /// There is no code challenge; PKCE is mandatory (RFC 7636 §4.4.1, RFC 8252 §6, RFC 9700 §2.1.1).
    case missingCodeChallenge
    /// The challenge method is not `S256`; `plain` is not accepted (RFC 9700 §2.1.1).
    case unsupportedCodeChallengeMethod
    /// The challenge is not the base64url of a SHA-256 digest (43 characters, RFC 7636 §4.2).
    case malformedCodeChallenge
    /// The scope is malformed or holds a token the client may not have (RFC 6749 §3.3).
    case invalidScope
    /// The account is no longer active.
    case accountInactive
    /// The account's grants were revoked while the grant was being created (a password change, say):
    /// the sign-in began before the revocation and must not outlive it. Nothing was stored; the user
    /// signs in again.
    case accountRevoked
    /// The store or the account directory failed; nothing was written.
    case backendFailed(any Error)

    /// Whether the authorize endpoint may redirect to the callback with an error (RFC 6749 §4.1.2.1).
    public var mayRedirect: Bool {
        switch self {
        case .unknownClient, .unregisteredRedirectURI: false
        case .missingCodeChallenge, .unsupportedCodeChallengeMethod, .malformedCodeChallenge, .invalidScope,
            .accountInactive, .accountRevoked, .backendFailed:
            true
        }
    }

    /// The `error` value for the redirect (RFC 6749 §4.1.2.1, RFC 7636 §4.4.1).
    public var oauthErrorCode: OAuthErrorCode {
        switch self {
        case .unknownClient: .invalidClient
        case .unregisteredRedirectURI, .missingCodeChallenge, .unsupportedCodeChallengeMethod, .malformedCodeChallenge:
            .invalidRequest
        case .invalidScope: .invalidScope
        case .accountInactive, .accountRevoked: .accessDenied
        case .backendFailed: .temporarilyUnavailable
        }
    }
}
