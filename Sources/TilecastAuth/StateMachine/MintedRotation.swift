// SPDX-License-Identifier: Apache-2.0

/// The fresh secrets for one refresh-token rotation.
struct MintedRotation: Sendable {
    var accessToken: OpaqueToken
    var refreshToken: OpaqueToken
}
