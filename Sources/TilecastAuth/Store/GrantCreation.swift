// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``GrantStore/createGrant(_:)``.
public enum GrantCreation: Hashable, Sendable {
    /// The grant and everything it starts with are stored.
    case created
    /// The grant's account had all its grants revoked at or after the issuance's
    /// ``GrantIssuance/authenticatedAt`` (``GrantStore/revokeGrants(of:reason:at:)``): the sign-in that
    /// led here was authenticated before the revocation, so it must not outlive it. Nothing was written.
    case accountRevoked
}
