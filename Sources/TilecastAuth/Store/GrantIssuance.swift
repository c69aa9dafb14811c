// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Everything a new grant starts with, written in one atomic store operation.
///
/// The grant's ``Grant/currentRefreshToken`` and ``Grant/session`` name the digests of
/// ``refreshToken`` and ``session``. The access and refresh tokens are absent when the server does not
/// issue a native credential; the session is absent for a grant created without one.
public struct GrantIssuance: Hashable, Sendable {
    /// The new grant.
    public var grant: Grant
    /// The grant's first access token.
    public var accessToken: AccessToken?
    /// The first refresh token of the grant's lineage.
    public var refreshToken: RefreshToken?
    /// The grant's Studio session.
    public var session: StudioSession?
    /// When the user proved who they are for this grant — the password check of a web login, the
    /// approval of a device code — which may be well before the grant is stored.
    /// ``GrantStore/createGrant(_:)`` refuses the grant if its account's grants were all revoked at or
    /// after this time. The grant's ``Grant/createdAt`` unless given.
    public var authenticatedAt: Date

    public init(
        grant: Grant,
        accessToken: AccessToken?,
        refreshToken: RefreshToken?,
        session: StudioSession?,
        authenticatedAt: Date? = nil
    ) {
        self.grant = grant
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.session = session
        self.authenticatedAt = authenticatedAt ?? grant.createdAt
    }
}
