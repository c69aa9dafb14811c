// SPDX-License-Identifier: Apache-2.0

// The outcomes of the store's atomic operations: closed sets, part of the `GrantStore` contract, so they
// stay enums — a new outcome would be a new contract, which every store must implement anyway.

/// The outcome of ``GrantStore/redeemCode(_:issuing:at:)``.
public enum CodeRedemption: Hashable, Sendable {
    /// The code was unused and unexpired; it is now redeemed and the issuance is stored.
    case redeemed
    /// The code had already been redeemed into `grant`. Nothing was written.
    case alreadyRedeemed(grant: GrantID)
    /// No code has this digest, or it expired. Nothing was written.
    case notFound
}

/// The outcome of ``GrantStore/createGrant(_:)``.
public enum GrantCreation: Hashable, Sendable {
    /// The grant and everything it starts with are stored.
    case created
    /// The grant's account had all its grants revoked at or after the issuance's
    /// ``GrantIssuance/authenticatedAt`` (``GrantStore/revokeGrants(of:reason:at:)``): the sign-in that
    /// led here was authenticated before the revocation, so it must not outlive it. Nothing was written.
    case accountRevoked
}

/// The outcome of ``GrantStore/rotateRefreshToken(_:replacing:successor:accessToken:at:)``.
public enum RefreshRotation: Hashable, Sendable {
    /// The grant's current token was the expected one; the successor is now current and the access
    /// token is stored.
    case rotated
    /// The grant's current token was not the expected one — another request rotated it first. Nothing
    /// was written; `current` is the presented token and its grant as they are now.
    ///
    /// Indirect: the lookup is 288 bytes, and held inline it made every rotation's outcome that size, copied
    /// whole each time it is returned or passed on; boxed, the outcome is one word, and only this rare
    /// answer allocates.
    indirect case superseded(current: RefreshTokenLookup)
    /// The grant is revoked or past its absolute expiry. Nothing was written.
    case grantNotLive
    /// No refresh token has the presented digest. Nothing was written.
    case notFound
}

/// The outcome of ``GrantStore/replaceSession(of:with:at:)``.
public enum SessionReplacement: Hashable, Sendable {
    /// The new session is stored and is the grant's only live session; `previous` is the digest of the
    /// session it ended, if there was one.
    case replaced(previous: SecretDigest?)
    /// The grant does not exist, is revoked or is past its absolute expiry. Nothing was written.
    case grantNotLive
}

/// The outcome of ``GrantStore/revokeGrant(_:reason:at:)``.
public enum GrantRevocation: Hashable, Sendable {
    /// The grant was live and is now revoked, with every token and the session hanging off it.
    case revoked(Grant)
    /// The grant had already been revoked. Nothing was written.
    case alreadyRevoked(Grant)
    /// No live grant has this id: it never existed or is past its absolute expiry. Nothing was written.
    case notFound
}
