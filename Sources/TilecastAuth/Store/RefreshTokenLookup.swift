// SPDX-License-Identifier: Apache-2.0

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
