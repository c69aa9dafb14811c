// SPDX-License-Identifier: Apache-2.0

// What the store's reads return: a token or session together with its grant, read at once, so that
// revoking the grant takes everything hanging off it. Three types of one shape rather than one generic
// `Lookup<Record>`: `lookup.session` and `lookup.token` say what they hold where a generic would say
// `lookup.record`, and a store's author implements each read against its own type.

/// An access token together with its grant, as one read returns them.
public struct AccessTokenLookup: Hashable, Sendable {
    /// The token.
    public var token: AccessToken
    /// The grant it belongs to.
    public var grant: Grant

    public init(token: AccessToken, grant: Grant) {
        self.token = token
        self.grant = grant
    }
}

/// A refresh token together with its grant, as one read returns them.
public struct RefreshTokenLookup: Hashable, Sendable {
    /// The token.
    public var token: RefreshToken
    /// The grant it belongs to.
    public var grant: Grant

    public init(token: RefreshToken, grant: Grant) {
        self.token = token
        self.grant = grant
    }
}

/// A Studio session together with its grant, as one read returns them.
public struct SessionLookup: Hashable, Sendable {
    /// The session.
    public var session: StudioSession
    /// The grant it belongs to.
    public var grant: Grant

    public init(session: StudioSession, grant: Grant) {
        self.session = session
        self.grant = grant
    }
}
