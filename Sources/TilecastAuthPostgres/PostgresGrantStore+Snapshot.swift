// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
package import TilecastAuth

extension PostgresGrantStore {
    /// Every record of the store's schema, as `InMemoryGrantStore`'s snapshot holds them — for the model
    /// checker, which compares the records before and after each request. Reads the tables one after
    /// another, outside any transaction: only for a store no request is writing to meanwhile. The rate
    /// limiter's table is not part of it.
    package func recordsSnapshot() async throws -> InMemoryGrantStore.Snapshot {
        let statements = SnapshotStatements(schema: configuration.quotedSchema)
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            var snapshot = InMemoryGrantStore.Snapshot()
            for row in try connection.execute(statements.codes, []).rows {
                let code = try row.authorizationCode()
                snapshot.codes[code.digest] = code
            }
            for row in try connection.execute(statements.grants, []).rows {
                let grant = try row.grant()
                snapshot.grants[grant.id] = grant
            }
            for row in try connection.execute(statements.refreshTokens, []).rows {
                let token = try row.refreshToken(at: 1, grant: try row.grantID(0))
                snapshot.refreshTokens[token.digest] = token
            }
            for row in try connection.execute(statements.accessTokens, []).rows {
                let token = AccessToken(
                    digest: try row.digest(1),
                    grant: try row.grantID(0),
                    issuedAt: try row.date(2),
                    expiresAt: try row.date(3)
                )
                snapshot.accessTokens[token.digest] = token
            }
            for row in try connection.execute(statements.sessions, []).rows {
                let session = StudioSession(
                    digest: try row.digest(1),
                    grant: try row.grantID(0),
                    startedAt: try row.date(2),
                    expiresAt: try row.date(3)
                )
                snapshot.sessions[session.digest] = session
            }
            for row in try connection.execute(statements.accountRevocations, []).rows {
                snapshot.accountRevocations[AccountID(try row.text(0))] = try row.date(1)
            }
            return snapshot
        }
    }
}

/// The statements that read every record of one schema, in the columns the store's decoders read.
private struct SnapshotStatements {
    let codes: PostgresStatement
    let grants: PostgresStatement
    let refreshTokens: PostgresStatement
    let accessTokens: PostgresStatement
    let sessions: PostgresStatement
    let accountRevocations: PostgresStatement

    init(schema: String) {
        func statement(_ name: String, _ sql: String) -> PostgresStatement {
            PostgresStatement(name: "snapshot_\(name)", sql: sql)
        }
        codes = statement(
            "codes",
            """
            SELECT digest, client_id, account_id, redirect_uri, scope, challenge_method, challenge_value,
                issued_at, expires_at, redeemed_grant, redeemed_at
            FROM \(schema).codes
            """
        )
        grants = statement("grants", "SELECT \(PostgresStatements.grantColumns) FROM \(schema).grants g")
        refreshTokens = statement(
            "refresh_tokens",
            """
            SELECT t.grant_id, t.digest, t.issued_at, t.expires_at, t.state, t.state_changed_at, t.successor
            FROM \(schema).refresh_tokens t
            """
        )
        accessTokens = statement(
            "access_tokens",
            "SELECT t.grant_id, t.digest, t.issued_at, t.expires_at FROM \(schema).access_tokens t"
        )
        sessions = statement(
            "sessions",
            "SELECT t.grant_id, t.digest, t.started_at, t.expires_at FROM \(schema).sessions t"
        )
        accountRevocations = statement(
            "account_revocations",
            "SELECT account_id, revoked_at FROM \(schema).account_revocations"
        )
    }
}
#endif
