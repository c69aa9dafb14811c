// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A grant: the family of everything issued from one authorization code.
///
/// The grant's access tokens, its refresh-token lineage and its Studio session all hang off it. Revoking
/// the grant is one write — ``revocation`` — that every lookup checks, so everything of the family dies
/// at once (RFC 7009 §2.1, OAuth 2.1 §4.3.1). Nothing of a grant outlives ``expiresAt``, the absolute
/// cap that rotation never extends.
public struct Grant: Hashable, Sendable {
    /// When and why a grant was revoked.
    public struct Revocation: Hashable, Sendable {
        /// When the grant was revoked.
        public var revokedAt: Date
        /// Why.
        public var reason: RevocationReason

        public init(revokedAt: Date, reason: RevocationReason) {
            self.revokedAt = revokedAt
            self.reason = reason
        }
    }

    /// The grant's identifier.
    public var id: GrantID
    /// The client the grant belongs to.
    public var client: ClientID
    /// The account that approved it.
    public var account: AccountID
    /// The approved scope; every credential of the grant carries exactly this scope.
    public var scope: Scope
    /// When the grant was created.
    public var createdAt: Date
    /// The absolute end of the grant and of everything hanging off it.
    public var expiresAt: Date
    /// The digest of the grant's live refresh token: the only one that rotates without a leeway.
    public var currentRefreshToken: SecretDigest?
    /// The digest of the grant's live Studio session; a grant has at most one.
    public var session: SecretDigest?
    /// Set once the grant is revoked.
    public var revocation: Revocation?

    public init(
        id: GrantID,
        client: ClientID,
        account: AccountID,
        scope: Scope,
        createdAt: Date,
        expiresAt: Date,
        currentRefreshToken: SecretDigest?,
        session: SecretDigest?,
        revocation: Revocation? = nil
    ) {
        self.id = id
        self.client = client
        self.account = account
        self.scope = scope
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.currentRefreshToken = currentRefreshToken
        self.session = session
        self.revocation = revocation
    }

    /// Whether the grant is neither revoked nor past its absolute expiry at `now`.
    public func isLive(at now: Date) -> Bool {
        revocation == nil && now < expiresAt
    }

    /// The order in which the stores list an account's grants (``GrantStore/grants(of:)``) and return
    /// those they revoke: oldest first, grants created at the same instant in the order of their ids'
    /// text — the PostgreSQL store's `ORDER BY created_at, id` — so that both stores list them alike.
    package static func isOlder(_ first: Grant, than second: Grant) -> Bool {
        first.createdAt != second.createdAt
            ? first.createdAt < second.createdAt : first.id.sortsBefore(second.id)
    }
}
