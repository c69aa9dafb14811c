// SPDX-License-Identifier: Apache-2.0

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
