// SPDX-License-Identifier: Apache-2.0

/// The fresh secrets for a new grant, minted from the random source.
struct MintedGrant: Sendable {
    var grant: GrantID
    /// `nil` when the server issues no native credential.
    var accessToken: OpaqueToken?
    /// `nil` when the server issues no native credential.
    var refreshToken: OpaqueToken?
    var session: OpaqueToken

    /// A grant id and its secrets: one random-source read each, in this order.
    static func mint(nativeCredential: Bool, using random: some RandomSource) -> MintedGrant {
        MintedGrant(
            grant: GrantID(randomSource: random),
            accessToken: nativeCredential ? .mint(.accessToken, using: random) : nil,
            refreshToken: nativeCredential ? .mint(.refreshToken, using: random) : nil,
            session: .mint(.studioSession, using: random)
        )
    }
}
