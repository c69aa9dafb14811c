// SPDX-License-Identifier: Apache-2.0

/// The grant's native credential as a successful response carries it (RFC 6749 §5.1).
public struct IssuedCredential: Sendable {
    /// The access token; `token_type` is always `Bearer` (RFC 6750).
    public let accessToken: OpaqueToken
    /// Seconds until the access token expires.
    public let expiresIn: Int
    /// The grant's new current refresh token.
    public let refreshToken: OpaqueToken
    /// The grant's scope, identical on every refresh (RFC 6749 §6).
    public let scope: Scope
}
