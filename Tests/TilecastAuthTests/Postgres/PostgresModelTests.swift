// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuthVerification

@testable import TilecastAuth
@testable import TilecastAuthPostgres

/// The model checker on the real store: two `PostgresGrantStore` instances on one schema, each
/// remembering what it wrote (`PostgresConfiguration.rememberedRecords`), the operations taking turns
/// between them and the bursts spread over both, every record read back from the server after each step.
/// The in-memory runs of `ModelBasedTests` check the engine; these check it on the functions, locks and
/// transactions users run, with records one instance wrote and the other used up.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresModelTests {
    /// Sequences per leeway, and operations per sequence: about a second a sequence.
    static let sequences = 40
    static let length = 60

    @Test(
        "The engine agrees with the reference model on two PostgreSQL instances that remember what they wrote",
        arguments: [0.0, 10.0]
    )
    func twoRememberingInstances(leeway: Double) async {
        let checker = ModelChecker(
            leeway: leeway,
            deployment: .stores("two PostgreSQL instances", make: Self.twoInstances)
        )
        let generator = OperationGenerator(concurrentRefreshes: leeway == 0)
        // Shrinking on a server costs a run per attempt: a few dozen, not the default.
        let statistics = await checker.runSeeded(Self.sequences, of: Self.length, from: generator, shrinkAttempts: 40)
        #expect(statistics.operations == Self.sequences * Self.length)
        // The instances answered lookups from what they wrote, and their writes met records the other
        // instance had used up: the remembered path ran on the server, fresh and stale.
        #expect(statistics.rememberedRecordsUsed > Self.sequences, "\(statistics.rememberedRecordsUsed)")
        #expect(statistics.rememberedRecordsFoundStale > 0, "\(statistics.rememberedRecordsFoundStale)")
    }

    /// Two migrated stores on a fresh schema, read back through the first one's pool.
    @Sendable static func twoInstances(clients: [Client]) async throws -> ModelStores {
        let schema = PostgresTestDatabase.uniqueSchema()
        let first = try await PostgresTestDatabase.makeStore(clients: clients, schema: schema, maximumConnections: 4)
        let second = try await PostgresTestDatabase.makeStore(clients: clients, schema: schema, maximumConnections: 4)
        return ModelStores(
            instances: [first, second],
            snapshot: { try await snapshot(of: schema, through: first) },
            rememberedRecords: {
                let (first, second) = (first.statistics, second.statistics)
                return (
                    first.rememberedRecordsUsed + second.rememberedRecordsUsed,
                    first.rememberedRecordsFoundStale + second.rememberedRecordsFoundStale
                )
            },
            close: {
                second.close()
                try? await first.dropSchema()
                first.close()
            }
        )
    }

    /// Every record of `schema`, as the in-memory store's snapshot holds them.
    static func snapshot(
        of schema: String,
        through store: PostgresGrantStore
    ) async throws
        -> InMemoryGrantStore.Snapshot
    {
        let statements = SnapshotStatements(schema: schema)
        return try await store.pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            var snapshot = InMemoryGrantStore.Snapshot(
                codes: [:],
                grants: [:],
                refreshTokens: [:],
                accessTokens: [:],
                sessions: [:],
                accountRevocations: [:]
            )
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
                PostgresStatement(name: "test_snapshot_\(name)_\(schema)", sql: sql)
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
}
#endif
