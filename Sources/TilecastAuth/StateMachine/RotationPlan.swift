// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A refresh-token rotation the state machine decided on: which token was presented, which one must
/// still be the grant's current token, and when the new tokens expire.
struct RotationPlan: Equatable {
    var presented: SecretDigest
    var current: SecretDigest
    var grant: GrantID
    var now: Date
    var refreshTokenExpiresAt: Date
    var accessTokenExpiresAt: Date

    /// The successor refresh token record for the minted secret.
    func successor(_ minted: MintedRotation) -> RefreshToken {
        RefreshToken(digest: minted.refreshToken.digest, grant: grant, issuedAt: now, expiresAt: refreshTokenExpiresAt)
    }

    /// The access token record for the minted secret.
    func accessToken(_ minted: MintedRotation) -> AccessToken {
        AccessToken(digest: minted.accessToken.digest, grant: grant, issuedAt: now, expiresAt: accessTokenExpiresAt)
    }
}

/// The fresh secrets for one refresh-token rotation.
struct MintedRotation: Sendable {
    var accessToken: OpaqueToken
    var refreshToken: OpaqueToken
    /// The new Studio session's id, when the refresh asked for one (`studio_session: true`).
    var session: OpaqueToken?

    /// An access token, a refresh token and, with `session`, a session id, in this order, from one read
    /// of the random source: 32 bytes of its own for each. Their digests are computed together.
    static func mint(session: Bool, using random: any RandomSource) -> MintedRotation {
        RandomBatch.read(SecretKind.randomByteCount * (session ? 3 : 2), from: random) { batch in
            guard session else {
                let (accessToken, refreshToken) = OpaqueToken.mint(.accessToken, .refreshToken, using: batch)
                return MintedRotation(accessToken: accessToken, refreshToken: refreshToken, session: nil)
            }
            let (accessToken, refreshToken, session) = OpaqueToken.mint(
                .accessToken,
                .refreshToken,
                .studioSession,
                using: batch
            )
            return MintedRotation(accessToken: accessToken, refreshToken: refreshToken, session: session)
        }
    }
}
