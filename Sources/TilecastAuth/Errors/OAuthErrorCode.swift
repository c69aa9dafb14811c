// SPDX-License-Identifier: Apache-2.0

/// An OAuth error code, the `error` member of every error response.
///
/// The RFC 6749 §5.2 token-endpoint codes, plus the registered codes the endpoint needs for what §5.2
/// does not cover: `access_denied` (RFC 6749 §4.1.2.1) for an inactive account,
/// `slow_down` (RFC 8628 §3.5) for rate limiting and `temporarily_unavailable` (RFC 6749 §4.1.2.1) for a
/// backend failure — and, for the authorize step's error redirects (``AuthorizationResponse``),
/// `unsupported_response_type` (RFC 6749 §4.1.2.1). Every value fits the `%x20-21 / %x23-5B / %x5D-7E` charset of §5.2.
public struct OAuthErrorCode: Hashable, Sendable {
    private enum Base: String, Hashable, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
        case accessDenied = "access_denied"
        case slowDown = "slow_down"
        case temporarilyUnavailable = "temporarily_unavailable"
        case unsupportedResponseType = "unsupported_response_type"
    }

    private let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// Missing, repeated, malformed or mistyped parameters; a body that is not a JSON object; a wrong
    /// method, media type or size; a browser origin that is not allowed.
    public static let invalidRequest = OAuthErrorCode(.invalidRequest)
    /// A `client_id` this endpoint does not serve.
    public static let invalidClient = OAuthErrorCode(.invalidClient)
    /// An invalid, expired, used, mismatched or revoked code or refresh token, or one of another client.
    public static let invalidGrant = OAuthErrorCode(.invalidGrant)
    /// A client that may not use the requested grant type.
    public static let unauthorizedClient = OAuthErrorCode(.unauthorizedClient)
    /// A `grant_type` other than `authorization_code` and `refresh_token`.
    public static let unsupportedGrantType = OAuthErrorCode(.unsupportedGrantType)
    /// A scope the client may not have.
    public static let invalidScope = OAuthErrorCode(.invalidScope)
    /// An inactive account.
    public static let accessDenied = OAuthErrorCode(.accessDenied)
    /// Too many authentication attempts.
    public static let slowDown = OAuthErrorCode(.slowDown)
    /// A backend — the store, the account directory or the rate limiter — failed, or concurrent requests
    /// contended for one refresh token; nothing was changed.
    public static let temporarilyUnavailable = OAuthErrorCode(.temporarilyUnavailable)
    /// The authorize step was asked for a `response_type` other than `code` (RFC 6749 §4.1.2.1).
    public static let unsupportedResponseType = OAuthErrorCode(.unsupportedResponseType)
}

extension OAuthErrorCode: CustomStringConvertible {
    /// The wire value, for example `invalid_grant`.
    public var description: String { base.rawValue }
}
