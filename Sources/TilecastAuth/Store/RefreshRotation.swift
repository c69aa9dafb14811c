// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``GrantStore/rotateRefreshToken(_:replacing:successor:accessToken:at:)``.
public enum RefreshRotation: Hashable, Sendable {
    /// The grant's current token was the expected one; the successor is now current and the access
    /// token is stored.
    case rotated
    /// The grant's current token was not the expected one — another request rotated it first. Nothing
    /// was written; `current` is the presented token and its grant as they are now.
    case superseded(current: RefreshTokenLookup)
    /// The grant is revoked or past its absolute expiry. Nothing was written.
    case grantNotLive
    /// No refresh token has the presented digest. Nothing was written.
    case notFound
}
