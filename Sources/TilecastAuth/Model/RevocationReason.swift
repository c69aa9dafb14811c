// SPDX-License-Identifier: Apache-2.0

/// Why a grant was revoked.
public enum RevocationReason: String, Hashable, Sendable, CaseIterable {
    /// A used authorization code came back with valid proof (RFC 6749 §4.1.2, OAuth 2.1 §4.1.3).
    case codeReplayed = "code_replayed"
    /// A rotated refresh token came back (RFC 9700 §4.14.2, OAuth 2.1 §4.3.1).
    case refreshTokenReused = "refresh_token_reused"
    /// The grant's Studio session was signed out: signing the session out revokes the grant.
    case signedOut = "signed_out"
    /// The embedding server revoked the grant: the user removed the app, an administrator acted, or the
    /// password changed (RFC 9700 §4.14.2).
    case revokedByServer = "revoked_by_server"
}
