// SPDX-License-Identifier: Apache-2.0

/// Why the endpoint refused a request: the fine-grained, server-side reason behind every error response.
///
/// The response carries the status and the OAuth error code; for `invalid_grant` its description is
/// deliberately the same whatever the reason (a caller holding a stolen code learns nothing about it).
/// The reason itself reaches the server through ``SecurityEvent/requestRefused(_:peerAddress:)`` for logs.
///
/// A struct with static members rather than an enum, so a later release can tell a new reason apart
/// without breaking a caller's `switch`; compare with `==`. Its ``description`` names the reason and its
/// detail, for logs.
public struct RefusalReason: Hashable, Sendable, CustomStringConvertible {
    /// The reasons, for the one mapping of a refusal to its response (``EndpointError``).
    enum Base: Hashable, Sendable {
        case methodNotAllowed
        case crossOriginRequest
        case unsupportedMediaType
        case bodyTooLarge(limit: Int)
        case rateLimited(retryAfterSeconds: Int)
        case malformedBody(detail: String)
        case duplicateMember
        case missingParameter(name: String)
        case invalidParameterType(name: String)
        case unsupportedGrantType
        case unknownClient
        case malformedCodeVerifier
        case redirectURIMismatch
        case codeNotFound
        case codeIssuedToAnotherClient
        case codeWithoutS256Challenge
        case codeVerifierMismatch
        case codeExpired
        case codeReplayed
        case refreshTokenNotFound
        case refreshTokenOfAnotherClient
        case refreshTokenExpired
        case refreshTokenReused
        case refreshTokenContended
        case grantRevoked
        case accountInactive
        case backendUnavailable(BackendOperation)
    }

    let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    public var description: String { String(describing: base) }

    // MARK: HTTP

    /// The method was not `POST` (RFC 6749 §3.2). 405 with `Allow: POST`.
    public static let methodNotAllowed = RefusalReason(.methodNotAllowed)
    /// The request carried a browser `Origin` the configuration does not allow (login CSRF). 400, not 403:
    /// the endpoint's contract keeps 403 for an inactive account.
    public static let crossOriginRequest = RefusalReason(.crossOriginRequest)
    /// The `Content-Type` was not `application/json` in UTF-8. 415.
    public static let unsupportedMediaType = RefusalReason(.unsupportedMediaType)
    /// The body was larger than the configured limit. 413.
    public static func bodyTooLarge(limit: Int) -> RefusalReason {
        RefusalReason(.bodyTooLarge(limit: limit))
    }
    /// Too many attempts from this peer. 429 with `Retry-After`.
    public static func rateLimited(retryAfterSeconds: Int) -> RefusalReason {
        RefusalReason(.rateLimited(retryAfterSeconds: retryAfterSeconds))
    }

    // MARK: Request

    /// The body is not one well-formed JSON object (RFC 8259), or nests too deeply.
    public static func malformedBody(detail: String) -> RefusalReason {
        RefusalReason(.malformedBody(detail: detail))
    }
    /// An object in the body repeats a member name (RFC 7493 §2.3, RFC 6749 §3.2).
    public static let duplicateMember = RefusalReason(.duplicateMember)
    /// A parameter the grant type needs is absent, `null` or empty (RFC 6749 §3.2).
    public static func missingParameter(name: String) -> RefusalReason {
        RefusalReason(.missingParameter(name: name))
    }
    /// A parameter has the wrong JSON type.
    public static func invalidParameterType(name: String) -> RefusalReason {
        RefusalReason(.invalidParameterType(name: name))
    }
    /// `grant_type` is neither `authorization_code` nor `refresh_token`.
    public static let unsupportedGrantType = RefusalReason(.unsupportedGrantType)
    /// `client_id` is not the client this endpoint serves.
    public static let unknownClient = RefusalReason(.unknownClient)
    /// `code_verifier` is not 43–128 unreserved characters (RFC 7636 §4.1).
    public static let malformedCodeVerifier = RefusalReason(.malformedCodeVerifier)

    // MARK: Authorization code

    /// `redirect_uri` differs from the callback or from the URI stored with the code (RFC 6749 §4.1.3).
    public static let redirectURIMismatch = RefusalReason(.redirectURIMismatch)
    /// No code has this value.
    public static let codeNotFound = RefusalReason(.codeNotFound)
    /// The code was issued to another client (RFC 6749 §4.1.3); it was not consumed.
    public static let codeIssuedToAnotherClient = RefusalReason(.codeIssuedToAnotherClient)
    /// The code was stored without an S256 challenge and is never redeemable (RFC 7636 §4.3,
    /// RFC 9700 §2.1.1).
    public static let codeWithoutS256Challenge = RefusalReason(.codeWithoutS256Challenge)
    /// The verifier does not match the stored challenge (RFC 7636 §4.6).
    public static let codeVerifierMismatch = RefusalReason(.codeVerifierMismatch)
    /// The code has expired (RFC 6749 §4.1.2).
    public static let codeExpired = RefusalReason(.codeExpired)
    /// The code was already redeemed; its grant was revoked (RFC 6749 §4.1.2).
    public static let codeReplayed = RefusalReason(.codeReplayed)

    // MARK: Refresh token

    /// No refresh token has this value.
    public static let refreshTokenNotFound = RefusalReason(.refreshTokenNotFound)
    /// The refresh token belongs to another client (RFC 6749 §10.4); it was not consumed.
    public static let refreshTokenOfAnotherClient = RefusalReason(.refreshTokenOfAnotherClient)
    /// The refresh token passed its idle expiry or its grant's absolute expiry.
    public static let refreshTokenExpired = RefusalReason(.refreshTokenExpired)
    /// The refresh token was already rotated; its grant was revoked (RFC 9700 §4.14.2).
    public static let refreshTokenReused = RefusalReason(.refreshTokenReused)
    /// Concurrent retries within the reuse leeway kept superseding each other; nothing was rotated and the
    /// token is still valid. 503 with `Retry-After: 1` — not `invalid_grant`, which tells the app its
    /// token is dead.
    public static let refreshTokenContended = RefusalReason(.refreshTokenContended)

    // MARK: Grant and account

    /// The grant was revoked.
    public static let grantRevoked = RefusalReason(.grantRevoked)
    /// The account is no longer active. 403.
    public static let accountInactive = RefusalReason(.accountInactive)

    // MARK: Backend

    /// The store, the account directory or the rate limiter failed; nothing was changed. 503.
    public static func backendUnavailable(_ value: BackendOperation) -> RefusalReason {
        RefusalReason(.backendUnavailable(value))
    }
}
