// SPDX-License-Identifier: Apache-2.0

/// Why the engine would not issue a code or create a grant.
///
/// An authorize endpoint maps these to RFC 6749 §4.1.2.1 responses: for ``unknownClient`` and
/// ``unregisteredRedirectURI`` it must show an error page and **not** redirect (the redirect URI cannot
/// be trusted); for the others it redirects to the callback with ``oauthErrorCode`` —
/// ``AuthorizationResponse/error(_:redirectURI:state:issuer:)-(IssuanceError,_,_,_)`` decides and builds it.
///
/// A struct with static members rather than an enum, so a later release can add a reason without
/// breaking a caller's `switch`. Two errors are equal when their reasons are; the ``underlyingError`` of
/// ``backendFailed(_:)`` is not compared.
public struct IssuanceError: Error, Equatable, CustomStringConvertible {
    private enum Base: Equatable {
        case unknownClient
        case unregisteredRedirectURI
        case missingCodeChallenge
        case unsupportedCodeChallengeMethod
        case malformedCodeChallenge
        case invalidScope
        case accountInactive
        case accountRevoked
        case backendFailed
    }

    private let base: Base
    /// The store's or the account directory's error, for ``backendFailed(_:)``; `nil` otherwise.
    public let underlyingError: (any Error)?

    private init(_ base: Base, underlyingError: (any Error)? = nil) {
        self.base = base
        self.underlyingError = underlyingError
    }

    /// No registered client has this id.
    public static let unknownClient = IssuanceError(.unknownClient)
    /// The redirect URI is not one the client registered, byte for byte (RFC 6749 §3.1.2.3).
    public static let unregisteredRedirectURI = IssuanceError(.unregisteredRedirectURI)
    /// There is no code challenge; PKCE is mandatory (RFC 7636 §4.4.1, RFC 8252 §6, RFC 9700 §2.1.1).
    public static let missingCodeChallenge = IssuanceError(.missingCodeChallenge)
    /// The challenge method is not `S256`; `plain` is not accepted (RFC 9700 §2.1.1).
    public static let unsupportedCodeChallengeMethod = IssuanceError(.unsupportedCodeChallengeMethod)
    /// The challenge is not the base64url of a SHA-256 digest (43 characters, RFC 7636 §4.2).
    public static let malformedCodeChallenge = IssuanceError(.malformedCodeChallenge)
    /// The scope is malformed or holds a token the client may not have (RFC 6749 §3.3).
    public static let invalidScope = IssuanceError(.invalidScope)
    /// The account is no longer active.
    public static let accountInactive = IssuanceError(.accountInactive)
    /// The account's grants were revoked while the grant was being created (a password change, say):
    /// the sign-in began before the revocation and must not outlive it. Nothing was stored; the user
    /// signs in again.
    public static let accountRevoked = IssuanceError(.accountRevoked)

    /// The store or the account directory failed with `error`; nothing was written.
    public static func backendFailed(_ error: any Error) -> IssuanceError {
        IssuanceError(.backendFailed, underlyingError: error)
    }

    public static func == (lhs: IssuanceError, rhs: IssuanceError) -> Bool {
        lhs.base == rhs.base
    }

    /// Whether the authorize endpoint may redirect to the callback with an error (RFC 6749 §4.1.2.1).
    public var mayRedirect: Bool {
        switch base {
        case .unknownClient, .unregisteredRedirectURI: false
        case .missingCodeChallenge, .unsupportedCodeChallengeMethod, .malformedCodeChallenge, .invalidScope,
            .accountInactive, .accountRevoked, .backendFailed:
            true
        }
    }

    /// The `error` value for the redirect (RFC 6749 §4.1.2.1, RFC 7636 §4.4.1).
    public var oauthErrorCode: OAuthErrorCode {
        switch base {
        case .unknownClient: .invalidClient
        case .unregisteredRedirectURI, .missingCodeChallenge, .unsupportedCodeChallengeMethod, .malformedCodeChallenge:
            .invalidRequest
        case .invalidScope: .invalidScope
        case .accountInactive, .accountRevoked: .accessDenied
        case .backendFailed: .temporarilyUnavailable
        }
    }

    /// A sentence for the redirect's `error_description` (RFC 6749 §4.1.2.1): what the client did wrong,
    /// in ASCII, never a secret and never a backend's own text.
    public var errorDescription: String {
        switch base {
        case .unknownClient: "The client is not registered."
        case .unregisteredRedirectURI: "The redirect URI is not registered for this client."
        case .missingCodeChallenge: "code_challenge is required (PKCE, RFC 7636)."
        case .unsupportedCodeChallengeMethod: "code_challenge_method must be S256."
        case .malformedCodeChallenge: "code_challenge must be 43 base64url characters: an S256 digest."
        case .invalidScope: "The scope holds a value this client may not have."
        case .accountInactive: "The account is not active."
        case .accountRevoked: "The account's grants were revoked after this sign-in began."
        case .backendFailed: "The server is temporarily unavailable."
        }
    }

    public var description: String {
        switch base {
        case .unknownClient: "unknownClient"
        case .unregisteredRedirectURI: "unregisteredRedirectURI"
        case .missingCodeChallenge: "missingCodeChallenge"
        case .unsupportedCodeChallengeMethod: "unsupportedCodeChallengeMethod"
        case .malformedCodeChallenge: "malformedCodeChallenge"
        case .invalidScope: "invalidScope"
        case .accountInactive: "accountInactive"
        case .accountRevoked: "accountRevoked"
        case .backendFailed: "backendFailed(\(underlyingError.map { String(describing: $0) } ?? "unknown"))"
        }
    }
}
