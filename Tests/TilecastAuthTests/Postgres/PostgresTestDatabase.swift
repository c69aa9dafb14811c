// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuth
@testable import TilecastAuthPostgres

extension PostgresTestDatabase {
    static func configuration(schema: String, maximumConnections: Int = 10) throws -> PostgresConfiguration {
        try PostgresConfiguration(databaseURL: url ?? "", schema: schema, maximumConnections: maximumConnections)
    }

    /// A migrated store in a fresh schema.
    static func makeStore(
        clients: [Client],
        schema: String = uniqueSchema(),
        maximumConnections: Int = 10
    ) async throws -> PostgresGrantStore {
        let store = PostgresGrantStore(
            clients: clients,
            configuration: try configuration(schema: schema, maximumConnections: maximumConnections)
        )
        try await store.migrate()
        return store
    }

    /// A store on a fresh schema to which migrations 1 to `version` alone were applied, each recorded as
    /// ``PostgresGrantStore/migrate()`` records it: a database as a release at that version left it.
    static func store(migratedUpTo version: Int, clients: [Client]) async throws -> PostgresGrantStore {
        let store = PostgresGrantStore(clients: clients, configuration: try configuration(schema: uniqueSchema()))
        let quoted = store.configuration.quotedSchema
        var script = """
            CREATE SCHEMA \(quoted);
            CREATE TABLE \(quoted).schema_migrations (
                version integer PRIMARY KEY, summary text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());

            """
        for migration in PostgresSchema.migrations where migration.version <= version {
            script += PostgresSchema.sql(migration, schema: quoted) + ";\n"
            script += PostgresSchema.recordSQL(migration, schema: quoted) + ";\n"
        }
        try await store.execute(script: script)
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

    /// A refresh token of `grant` — fresh random bytes — issued at `now` and living `lifetime` seconds.
    static func refreshToken(of grant: GrantID, at now: Date, lifetime: TimeInterval = 3600) -> RefreshToken {
        RefreshToken(
            digest: OpaqueToken.mint(.refreshToken, using: SystemRandomSource()).digest,
            grant: grant,
            issuedAt: now,
            expiresAt: now.addingTimeInterval(lifetime)
        )
    }

    /// An access token of `grant` — fresh random bytes — issued at `now` and living 15 minutes.
    static func accessToken(of grant: GrantID, at now: Date) -> AccessToken {
        AccessToken(
            digest: OpaqueToken.mint(.accessToken, using: SystemRandomSource()).digest,
            grant: grant,
            issuedAt: now,
            expiresAt: now.addingTimeInterval(900)
        )
    }

    /// Creates a grant of `account` at `now` (an hour long) whose current refresh token lives
    /// `refreshTokenLifetime` seconds; returns the grant's id and that token.
    static func createGrant(
        in store: PostgresGrantStore,
        account: AccountID,
        at now: Date,
        refreshTokenLifetime: TimeInterval
    ) async throws -> (GrantID, RefreshToken) {
        var issuance = bareIssuance(account: account, at: now)
        let token = refreshToken(of: issuance.grant.id, at: now, lifetime: refreshTokenLifetime)
        issuance.grant.currentRefreshToken = token.digest
        issuance.refreshToken = token
        #expect(try await store.createGrant(issuance) == .created)
        return (issuance.grant.id, token)
    }

    /// A pending code of `account` and a grant of `account` with its current refresh token (living an
    /// hour), both made at `now`: a record of each kind a lookup reads.
    static func codeAndGrant(
        in store: PostgresGrantStore,
        account: AccountID,
        at now: Date
    ) async throws -> (code: OpaqueToken, grant: GrantID, token: RefreshToken) {
        let code = try await insertCode(into: store, account: account, at: now)
        let (grant, token) = try await createGrant(in: store, account: account, at: now, refreshTokenLifetime: 3600)
        return (code, grant, token)
    }

    /// Rotates `grant`'s current token `presented` at `now`, as a first refresh does, to a successor
    /// living `successorLifetime` seconds, and returns the successor.
    static func rotate(
        _ presented: RefreshToken,
        of grant: GrantID,
        in store: PostgresGrantStore,
        at now: Date,
        successorLifetime: TimeInterval = 3600
    ) async throws -> RefreshToken {
        let successor = refreshToken(of: grant, at: now, lifetime: successorLifetime)
        let outcome = try await store.rotateRefreshToken(
            presented.digest,
            replacing: presented.digest,
            successor: successor,
            accessToken: accessToken(of: grant, at: now),
            at: now
        )
        #expect(outcome == .rotated)
        return successor
    }

    /// A session of its own, on the server of `store`, inside a transaction that holds the rows of
    /// `table` in `store`'s schema that match `condition` (`FOR UPDATE`) until the caller commits it.
    static func holdRows(
        of store: PostgresGrantStore,
        in table: String,
        where condition: String
    ) throws -> PostgresConnection {
        let holder = try PostgresConnection.open(store.configuration)
        try holder.execute(
            script: "BEGIN; SELECT 1 FROM \(store.configuration.quotedSchema).\(table) WHERE \(condition) FOR UPDATE"
        )
        return holder
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
#endif
