// SPDX-License-Identifier: Apache-2.0

/// The fresh secrets for one refresh-token rotation.
struct MintedRotation: Sendable {
    var accessToken: OpaqueToken
    var refreshToken: OpaqueToken

    /// An access token and a refresh token: one random-source read each, in this order.
    static func mint(using random: some RandomSource) -> MintedRotation {
        MintedRotation(
            accessToken: .mint(.accessToken, using: random),
            refreshToken: .mint(.refreshToken, using: random)
        )
    }
}
