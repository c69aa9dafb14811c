// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``GrantStore/revokeGrant(_:reason:at:)``.
public enum GrantRevocation: Hashable, Sendable {
    /// The grant was live and is now revoked, with every token and the session hanging off it.
    case revoked(Grant)
    /// The grant had already been revoked. Nothing was written.
    case alreadyRevoked(Grant)
    /// No live grant has this id: it never existed or is past its absolute expiry. Nothing was written.
    case notFound
}
