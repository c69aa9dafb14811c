// SPDX-License-Identifier: Apache-2.0

/// The fresh secrets for a new grant, minted by the driver from the random source.
struct MintedGrant: Sendable {
    var grant: GrantID
    /// `nil` when the server issues no native credential.
    var accessToken: OpaqueToken?
    /// `nil` when the server issues no native credential.
    var refreshToken: OpaqueToken?
    var session: OpaqueToken
}
