// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A stored Studio web session, keyed by the digest of the session id the cookie carries.
///
/// The session belongs to its grant: revoking the grant ends it, and signing it out revokes the grant.
/// A grant has at most one live session; a refresh with `studio_session: true` replaces it.
public struct StudioSession: Hashable, Sendable {
    /// The digest of the session id.
    public var digest: SecretDigest
    /// The grant the session belongs to.
    public var grant: GrantID
    /// When the session started.
    public var startedAt: Date
    /// The first instant at which the session is no longer valid; never later than the grant's expiry.
    public var expiresAt: Date

    public init(digest: SecretDigest, grant: GrantID, startedAt: Date, expiresAt: Date) {
        self.digest = digest
        self.grant = grant
        self.startedAt = startedAt
        self.expiresAt = expiresAt
    }
}
