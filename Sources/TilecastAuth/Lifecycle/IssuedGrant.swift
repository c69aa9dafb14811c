// SPDX-License-Identifier: Apache-2.0

/// A grant created by ``AuthEngine/createGrant(account:client:scope:startsSession:authenticatedAt:)``, with its
/// first credential and, if one was asked for, its session cookie.
public struct IssuedGrant: Sendable {
    /// The new grant.
    public let grant: GrantID
    /// Its first access and refresh token.
    public let credential: IssuedCredential
    /// The Studio session cookie, when the grant started with a session.
    public let cookie: SessionCookie?
}
