// SPDX-License-Identifier: Apache-2.0

/// A well-formed ios-session request, after the body has been parsed and every parameter checked for
/// presence, type and shape — but before anything has been looked up.
enum ExchangeRequest {
    /// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5).
    struct AuthorizationCode {
        /// The code as presented.
        var code: JSONText
        /// The redirect URI as presented; already known to equal the configured callback byte for byte.
        var redirectURI: JSONText
        /// The PKCE verifier; already known to be 43–128 unreserved characters.
        var codeVerifier: JSONText
    }

    /// `grant_type=refresh_token` (RFC 6749 §6).
    struct RefreshToken {
        /// The refresh token as presented.
        var refreshToken: JSONText
        /// Whether to start a new Studio session that replaces the grant's earlier one.
        var studioSession: Bool
    }

    case authorizationCode(AuthorizationCode)
    case refreshToken(RefreshToken)
}
