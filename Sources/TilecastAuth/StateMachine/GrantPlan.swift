// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a successful code exchange creates: decided by the state machine, minted and stored by the
/// driver.
struct GrantPlan: Equatable {
    /// The digest of the code being redeemed.
    var code: SecretDigest
    var client: ClientID
    var account: AccountID
    var scope: Scope
    var now: Date
    /// The grant's absolute expiry.
    var grantExpiresAt: Date
    /// Whether to mint the native credential.
    var issuesNativeCredential: Bool
    var accessTokenExpiresAt: Date
    var refreshTokenExpiresAt: Date
    var sessionExpiresAt: Date

    /// The records to store for the minted secrets.
    func issuance(_ minted: MintedGrant) -> GrantIssuance {
        let accessToken = minted.accessToken.map {
            AccessToken(digest: $0.digest, grant: minted.grant, issuedAt: now, expiresAt: accessTokenExpiresAt)
        }
        let refreshToken = minted.refreshToken.map {
            RefreshToken(digest: $0.digest, grant: minted.grant, issuedAt: now, expiresAt: refreshTokenExpiresAt)
        }
        let session = StudioSession(
            digest: minted.session.digest,
            grant: minted.grant,
            startedAt: now,
            expiresAt: sessionExpiresAt
        )
        let grant = Grant(
            id: minted.grant,
            client: client,
            account: account,
            scope: scope,
            createdAt: now,
            expiresAt: grantExpiresAt,
            currentRefreshToken: refreshToken?.digest,
            session: session.digest
        )
        return GrantIssuance(grant: grant, accessToken: accessToken, refreshToken: refreshToken, session: session)
    }
}
