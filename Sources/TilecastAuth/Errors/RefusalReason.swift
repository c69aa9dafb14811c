// SPDX-License-Identifier: Apache-2.0

/// Why the endpoint refused a request: the fine-grained, server-side reason behind every error response.
///
/// The response carries the status and the OAuth error code; for `invalid_grant` its description is
/// deliberately the same whatever the reason (a caller holding a stolen code learns nothing about it).
/// The reason itself reaches the server through ``SecurityEvent/requestRefused(_:peerAddress:)`` for logs.
public enum RefusalReason: Hashable, Sendable {
    // HTTP

    /// The method was not `POST` (RFC 6749 §3.2). 405 with `Allow: POST`.
    case methodNotAllowed
    /// The request carried a browser `Origin` the configuration does not allow (login CSRF). 400, not 403:
    /// the endpoint's contract keeps 403 for an inactive account.
    case crossOriginRequest
    /// The `Content-Type` was not `application/json` in UTF-8. 415.
    case unsupportedMediaType
    /// The body was larger than the configured limit. 413.
    case bodyTooLarge(limit: Int)
    /// Too many attempts from this peer. 429 with `Retry-After`.
    case rateLimited(retryAfterSeconds: Int)

    // Request

    /// The body is not one well-formed JSON object (RFC 8259), or nests too deeply.
    case malformedBody(detail: String)
    /// An object in the body repeats a member name (RFC 7493 §2.3, RFC 6749 §3.2).
    case duplicateMember
    /// A parameter the grant type needs is absent, `null` or empty (RFC 6749 §3.2).
    case missingParameter(name: String)
    /// A parameter has the wrong JSON type.
    case invalidParameterType(name: String)
    /// `grant_type` is neither `authorization_code` nor `refresh_token`.
    case unsupportedGrantType
    /// `client_id` is not the client this endpoint serves.
    case unknownClient
    /// `code_verifier` is not 43–128 unreserved characters (RFC 7636 §4.1).
    case malformedCodeVerifier

    // Authorization code

    /// `redirect_uri` differs from the callback or from the URI stored with the code (RFC 6749 §4.1.3).
    case redirectURIMismatch
    /// No code has this value.
    case codeNotFound
    /// The code was issued to another client (RFC 6749 §4.1.3); it was not consumed.
    case codeIssuedToAnotherClient
    /// The code was stored without an S256 challenge and is never redeemable (RFC 7636 §4.3,
    /// RFC 9700 §2.1.1).
    case codeWithoutS256Challenge
    /// The verifier does not match the stored challenge (RFC 7636 §4.6).
    case codeVerifierMismatch
    /// The code has expired (RFC 6749 §4.1.2).
    case codeExpired
    /// The code was already redeemed; its grant was revoked (RFC 6749 §4.1.2).
    case codeReplayed

    // Refresh token

    /// No refresh token has this value.
    case refreshTokenNotFound
    /// The refresh token belongs to another client (RFC 6749 §10.4); it was not consumed.
    case refreshTokenOfAnotherClient
    /// The refresh token passed its idle expiry or its grant's absolute expiry.
    case refreshTokenExpired
    /// The refresh token was already rotated; its grant was revoked (RFC 9700 §4.14.2).
    case refreshTokenReused
    /// Concurrent retries within the reuse leeway kept superseding each other; nothing was rotated and the
    /// token is still valid. 503 with `Retry-After: 1` — not `invalid_grant`, which tells the app its
    /// token is dead.
    case refreshTokenContended

    // Grant and account

    /// The grant was revoked.
    case grantRevoked
    /// The account is no longer active. 403.
    case accountInactive

    // Backend

    /// The store, the account directory or the rate limiter failed; nothing was changed. 503.
    case backendUnavailable(BackendOperation)
}
