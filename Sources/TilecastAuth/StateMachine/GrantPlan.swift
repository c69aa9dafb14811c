// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a new grant starts with — its expiries, and whether it has a native credential — decided by the
/// state machine (or ``AuthEngine/createGrant(account:client:scope:startsSession:authenticatedAt:)``), minted and
/// stored by the driver.
struct GrantPlan: Equatable {
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

    /// Plans a grant starting `now`. Nothing of a grant outlives its absolute expiry; without a native
    /// credential the grant is only its session, and lives as long as the session does.
    init(
        client: ClientID,
        account: AccountID,
        scope: Scope,
        now: Date,
        lifetimes: LifetimeIntervals,
        issuesNativeCredential: Bool
    ) {
        let grantLifetime = issuesNativeCredential ? lifetimes.refreshTokenAbsolute : lifetimes.studioSession
        let grantExpiresAt = now.addingTimeInterval(grantLifetime)
        self.client = client
        self.account = account
        self.scope = scope
        self.now = now
        self.grantExpiresAt = grantExpiresAt
        self.issuesNativeCredential = issuesNativeCredential
        self.accessTokenExpiresAt = now.adding(lifetimes.accessToken, cappedAt: grantExpiresAt)
        self.refreshTokenExpiresAt = now.adding(lifetimes.refreshTokenIdle, cappedAt: grantExpiresAt)
        self.sessionExpiresAt = now.adding(lifetimes.studioSession, cappedAt: grantExpiresAt)
    }

    /// The records to store for the minted secrets; without a session when `startsSession` is false.
    func issuance(_ minted: MintedGrant, startsSession: Bool = true) -> GrantIssuance {
        let accessToken = minted.accessToken.map {
            AccessToken(digest: $0.digest, grant: minted.grant, issuedAt: now, expiresAt: accessTokenExpiresAt)
        }
        let refreshToken = minted.refreshToken.map {
            RefreshToken(digest: $0.digest, grant: minted.grant, issuedAt: now, expiresAt: refreshTokenExpiresAt)
        }
        let session =
            startsSession
            ? StudioSession(
                digest: minted.session.digest,
                grant: minted.grant,
                startedAt: now,
                expiresAt: sessionExpiresAt
            )
            : nil
        let grant = Grant(
            id: minted.grant,
            client: client,
            account: account,
            scope: scope,
            createdAt: now,
            expiresAt: grantExpiresAt,
            currentRefreshToken: refreshToken?.digest,
            session: session?.digest
        )
        return GrantIssuance(grant: grant, accessToken: accessToken, refreshToken: refreshToken, session: session)
    }

    /// Seconds from the request's time until the access token expires: the credential's `expires_in`
    /// (RFC 6749 §5.1).
    var accessTokenExpiresIn: Int { now.wholeSeconds(until: accessTokenExpiresAt) }

    /// The credential to return for the minted tokens, or `nil` when the grant has none.
    func credential(_ minted: MintedGrant) -> IssuedCredential? {
        guard let accessToken = minted.accessToken, let refreshToken = minted.refreshToken else { return nil }
        return IssuedCredential(
            accessToken: accessToken,
            expiresIn: accessTokenExpiresIn,
            refreshToken: refreshToken,
            scope: scope
        )
    }

    /// The cookie for the minted session.
    func cookie(_ minted: MintedGrant, configuration: SessionCookieConfiguration) -> SessionCookie {
        SessionCookie(
            session: minted.session,
            maxAge: now.wholeSeconds(until: sessionExpiresAt),
            configuration: configuration
        )
    }
}

/// The fresh secrets for a new grant, minted from the random source.
struct MintedGrant: Sendable {
    var grant: GrantID
    /// `nil` when the server issues no native credential.
    var accessToken: OpaqueToken?
    /// `nil` when the server issues no native credential.
    var refreshToken: OpaqueToken?
    var session: OpaqueToken

    /// A grant id and its secrets, in this order, from one read of the random source: 16 bytes for the
    /// id and 32 of its own for each secret. The secrets' digests are computed together.
    static func mint(nativeCredential: Bool, using random: any RandomSource) -> MintedGrant {
        let byteCount = 16 + SecretKind.randomByteCount * (nativeCredential ? 3 : 1)
        return RandomBatch.read(byteCount, from: random) { batch in
            let grant = GrantID(randomSource: batch)
            guard nativeCredential else {
                return MintedGrant(
                    grant: grant,
                    accessToken: nil,
                    refreshToken: nil,
                    session: .mint(.studioSession, using: batch)
                )
            }
            let (accessToken, refreshToken, session) = OpaqueToken.mint(
                .accessToken,
                .refreshToken,
                .studioSession,
                using: batch
            )
            return MintedGrant(grant: grant, accessToken: accessToken, refreshToken: refreshToken, session: session)
        }
    }
}
