// SPDX-License-Identifier: Apache-2.0

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

    public init(grant: Grant, accessToken: AccessToken?, refreshToken: RefreshToken?, session: StudioSession?) {
        self.grant = grant
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.session = session
    }
}
