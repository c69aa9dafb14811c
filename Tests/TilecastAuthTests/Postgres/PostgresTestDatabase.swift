// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuth
import TilecastAuthPostgres

/// The PostgreSQL server the PostgreSQL tests run against: `TILECAST_DATABASE_URL`, a libpq connection
/// string or URI. Without it those tests report themselves skipped; `.ci/run` starts a throwaway
/// cluster, sets it, and sets `TILECAST_REQUIRE_DATABASE=1` so that skipping fails instead.
enum PostgresTestDatabase {
    static let url = ProcessInfo.processInfo.environment["TILECAST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isRequired = ProcessInfo.processInfo.environment["TILECAST_REQUIRE_DATABASE"] == "1"
    static var isAvailable: Bool { url != nil }
    static let skipMessage: Comment =
        "TILECAST_DATABASE_URL is not set: the PostgreSQL tests need a server (see Docs/PostgreSQL.md, Testing)"

    /// A schema name no other test uses, so tests run in parallel against one database.
    static func uniqueSchema() -> String {
        "tilecast_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    static func configuration(schema: String, maximumConnections: Int = 10) -> PostgresConfiguration {
        PostgresConfiguration(databaseURL: url ?? "", schema: schema, maximumConnections: maximumConnections)
    }

    /// A migrated store in a fresh schema.
    static func makeStore(
        clients: [Client],
        schema: String = uniqueSchema(),
        maximumConnections: Int = 10
    ) async throws -> PostgresGrantStore {
        let store = PostgresGrantStore(
            clients: clients,
            configuration: configuration(schema: schema, maximumConnections: maximumConnections)
        )
        try await store.migrate()
        return store
    }

    /// Inserts a code of the iOS client for `account`, issued at `now` and good for a minute, and returns
    /// its secret.
    static func insertCode(
        into store: PostgresGrantStore,
        account: AccountID,
        at now: Date,
        challenge: CodeChallenge? = nil
    ) async throws -> OpaqueToken {
        let code = OpaqueToken.mint(.authorizationCode, using: SystemRandomSource())
        try await store.insertCode(
            AuthorizationCode(
                digest: code.digest,
                client: .tilecastIOS,
                account: account,
                redirectURI: PostgresConcurrencyTests.callback,
                scope: Scope("profile")!,
                challenge: challenge,
                issuedAt: now,
                expiresAt: now.addingTimeInterval(60)
            )
        )
        return code
    }

    /// What redeeming a code issues at its simplest: a new grant of `account` for an hour, without
    /// tokens or a session.
    static func bareIssuance(account: AccountID, at now: Date) -> GrantIssuance {
        GrantIssuance(
            grant: Grant(
                id: GrantID(rawValue: UUID()),
                client: .tilecastIOS,
                account: account,
                scope: Scope("profile")!,
                createdAt: now,
                expiresAt: now.addingTimeInterval(3600),
                currentRefreshToken: nil,
                session: nil
            ),
            accessToken: nil,
            refreshToken: nil,
            session: nil
        )
    }

    /// A well-formed refresh request for a token no store holds: the engine must ask the store.
    static let unknownRefreshTokenRequest = EndpointRequest(
        method: "POST",
        headers: ["Content-Type": "application/json"],
        body: Array(
            #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"tcr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#
                .utf8
        ),
        peerAddress: "192.0.2.1"
    )
}
