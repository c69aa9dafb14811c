// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
extension PostgresGrantStore {
    /// The statements the server has executed in this database so far — those inside functions
    /// included — from `pg_stat_statements`, which must be preloaded with `track = all`; `nil` where it is
    /// not. For the benchmark's statements-per-operation figures.
    package func serverStatementCount() async throws -> Int? {
        let create = PostgresStatement(
            name: "diagnostics_extension",
            sql: "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
        )
        let count = PostgresStatement(
            name: "diagnostics_statements",
            sql: """
                SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                """
        )
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) -> Int? in
            _ = try? connection.execute(create, [])
            guard let result = try? connection.execute(count, []), result.rowCount == 1 else { return nil }
            return Int(try result.row(0).int8(0))
        }
    }

    /// Updates the planner's statistics of the store's tables (`ANALYZE`), as autovacuum does on its own
    /// once a table has changed by a tenth. For benchmarks that fill a fresh schema and then measure it:
    /// without statistics, plans made while a table was empty scan it whole.
    package func analyze() async throws {
        let schema = configuration.quotedSchema
        let tables = [
            "codes", "grants", "refresh_tokens", "access_tokens", "sessions", "rate_limits", "account_revocations",
        ]
        try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(script: "ANALYZE " + tables.map { "\(schema).\($0)" }.joined(separator: ", "))
        }
    }

    /// Drops the store's schema with everything in it. For benchmarks and tests that made a schema of
    /// their own; never for a schema that holds real grants.
    package func dropSchema() async throws {
        let schema = configuration.quotedSchema
        try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(script: "DROP SCHEMA IF EXISTS \(schema) CASCADE")
        }
    }
}
#endif
