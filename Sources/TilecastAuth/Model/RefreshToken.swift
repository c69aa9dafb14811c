// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A stored refresh token, keyed by the digest of the token.
///
/// Refresh tokens rotate on every use (RFC 9700 §2.2.2, §4.14.2). A rotated token is not deleted: it is
/// retained, with a pointer to its successor, until it would have expired anyway, so that its reuse can
/// be detected and the whole grant revoked (RFC 6749 §10.4: "invalidated but retained").
public struct RefreshToken: Hashable, Sendable {
    /// Where a token stands in its grant's lineage.
    public enum State: Hashable, Sendable {
        /// The token has not been used. It is the grant's ``Grant/currentRefreshToken``.
        case active
        /// The token was used at `rotatedAt` and `successor` was issued for it. When the configuration
        /// has a reuse leeway, the token may be presented again within it while `successor` is still
        /// current; each such retry issues a new successor and retires the previous one.
        case rotated(rotatedAt: Date, successor: SecretDigest)
        /// A successor that a leeway retry replaced before it was used. Any use of it is reuse.
        case retired(retiredAt: Date)
    }

    /// The digest of the token.
    public var digest: SecretDigest
    /// The grant the token belongs to; the token's client is the grant's client.
    public var grant: GrantID
    /// When the token was issued.
    public var issuedAt: Date
    /// The idle expiry: the token's issue time plus the idle lifetime, never later than the grant's
    /// absolute expiry.
    public var expiresAt: Date
    /// Where the token stands in the lineage.
    public var state: State

    public init(digest: SecretDigest, grant: GrantID, issuedAt: Date, expiresAt: Date, state: State = .active) {
        self.digest = digest
        self.grant = grant
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.state = state
    }
}

extension RefreshToken {
    /// Whether presenting this token at `now` is a retry the reuse leeway allows: `now` is less
    /// than `leeway` from the rotation's time — on either side, so that a clock set back never stretches
    /// the window, and open at both ends, as every expiry is (C-9) — and the token's successor is still
    /// the grant's current token. Anything else but an active token is reuse (RFC 9700 §4.14.2).
    func isRetryWithinLeeway(of grant: Grant, at now: Date, leeway: Duration) -> Bool {
        guard case .rotated(let rotatedAt, let successor) = state, leeway > .zero else { return false }
        return abs(now.timeIntervalSince(rotatedAt)) < leeway.timeInterval && grant.currentRefreshToken == successor
    }
}
