// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// Records for the conformance checks, with fresh random digests and fixed times.
struct StoreFixture: Sendable {
    static let clients = [
        Client(id: .tilecastIOS, redirectURIs: ["tilecast-ios://oauth/callback"], allowedScopeTokens: ["profile"]),
        Client(
            id: "tilecast-web",
            redirectURIs: ["https://studio.tilecast.test/callback"],
            allowedScopeTokens: ["profile"]
        ),
    ]

    /// The checks' "now".
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let random = SystemRandomSource()

    /// A fresh random digest.
    func digest() -> SecretDigest {
        OpaqueToken.mint(.refreshToken, using: random).digest
    }

    func grantID() -> GrantID {
        GrantID(rawValue: UUID())
    }

    /// An unused code of `account`, issued at `issuedAt` (`t0` by default) and valid for `lifetime` seconds.
    func code(
        client: ClientID = .tilecastIOS,
        account: AccountID = "account-1",
        issuedAt: Date? = nil,
        lifetime: Double = 60
    ) -> AuthorizationCode {
        let issuedAt = issuedAt ?? t0
        return AuthorizationCode(
            digest: digest(),
            client: client,
            account: account,
            redirectURI: "tilecast-ios://oauth/callback",
            scope: Scope("profile")!,
            challenge: CodeChallenge(method: .s256, value: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
            issuedAt: issuedAt,
            expiresAt: issuedAt.addingTimeInterval(lifetime)
        )
    }

    /// A new grant living `lifetime` seconds, with an access token (15 min), a refresh token (1 h) and,
    /// unless `session` is false, a session (30 min).
    func issuance(
        account: AccountID = "account-1",
        client: ClientID = .tilecastIOS,
        at now: Date? = nil,
        lifetime: Double = 86_400,
        session: Bool = true
    ) -> GrantIssuance {
        let now = now ?? t0
        let id = grantID()
        let expiresAt = now.addingTimeInterval(lifetime)
        let refresh = RefreshToken(
            digest: digest(),
            grant: id,
            issuedAt: now,
            expiresAt: min(now.addingTimeInterval(3600), expiresAt)
        )
        let studio =
            session
            ? StudioSession(
                digest: digest(),
                grant: id,
                startedAt: now,
                expiresAt: min(now.addingTimeInterval(1800), expiresAt)
            )
            : nil
        return GrantIssuance(
            grant: Grant(
                id: id,
                client: client,
                account: account,
                scope: Scope("profile")!,
                createdAt: now,
                expiresAt: expiresAt,
                currentRefreshToken: refresh.digest,
                session: studio?.digest
            ),
            accessToken: AccessToken(
                digest: digest(),
                grant: id,
                issuedAt: now,
                expiresAt: min(now.addingTimeInterval(900), expiresAt)
            ),
            refreshToken: refresh,
            session: studio
        )
    }

    /// A successor refresh token and access token for a rotation of `grant` at `now`.
    func rotation(of grant: GrantID, at now: Date) -> (RefreshToken, AccessToken) {
        (
            RefreshToken(digest: digest(), grant: grant, issuedAt: now, expiresAt: now.addingTimeInterval(3600)),
            AccessToken(digest: digest(), grant: grant, issuedAt: now, expiresAt: now.addingTimeInterval(900))
        )
    }

    /// A session for `grant` starting at `now`.
    func session(of grant: GrantID, at now: Date) -> StudioSession {
        StudioSession(digest: digest(), grant: grant, startedAt: now, expiresAt: now.addingTimeInterval(1800))
    }
}
