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

    /// What one round trip and one durable commit cost on this server: the medians, in microseconds, of
    /// `samples` `SELECT 1`s and of `samples` one-row inserts into a table of the store's schema, each its
    /// own transaction committed as the server is configured (durably by default, as `redeem_code` and
    /// `rotate_refresh_token` commit). Each sample is an operation of its own, with its own deadline; only
    /// the statement is timed. For the benchmark's floor: what a code exchange or a refresh costs at the
    /// least, whatever its statements do. With one connection in the pool, every sample uses the same one.
    package func roundTripCosts(samples: Int) async throws -> (roundTrip: Double, durableWrite: Double) {
        let schema = configuration.quotedSchema
        let select = PostgresStatement(name: "diagnostics_round_trip", sql: "SELECT 1")
        let insert = PostgresStatement(
            name: "diagnostics_durable_write",
            sql: "INSERT INTO \(schema).diagnostics_commits (n) VALUES (1)"
        )
        try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(
                script: "CREATE TABLE IF NOT EXISTS \(schema).diagnostics_commits (n int4 NOT NULL)"
            )
        }
        func median(_ statement: PostgresStatement) async throws -> Double {
            var times: [Double] = []
            // The first execution prepares the statement on the connection: not timed.
            for sample in 0...max(1, samples) {
                let microseconds = try await pool.withConnection(idempotent: false) {
                    connection throws(PostgresError) -> Double in
                    let start = ContinuousClock.now
                    _ = try connection.execute(statement, [])
                    let elapsed = (ContinuousClock.now - start).components
                    return Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12
                }
                if sample > 0 { times.append(microseconds) }
            }
            return times.sorted()[times.count / 2]
        }
        return (try await median(select), try await median(insert))
    }

    /// The server's version and the settings that decide whether a commit waits for its WAL to reach the
    /// disk — `fsync`, `synchronous_commit`, `wal_sync_method` — as `pg_settings` names them, in that
    /// order, the version first. For the benchmark, whose figures mean something else on a server that
    /// does not flush: a redeemed code or a rotated token survives a crash only if its commit was flushed.
    package func durabilitySettings() async throws -> [(name: String, value: String)] {
        let read = PostgresStatement(
            name: "diagnostics_durability",
            sql: """
                SELECT s.name, s.setting
                FROM unnest(ARRAY['server_version', 'fsync', 'synchronous_commit', 'wal_sync_method'])
                    WITH ORDINALITY AS wanted (name, position)
                JOIN pg_settings s ON s.name = wanted.name
                ORDER BY wanted.position
                """
        )
        return try await pool.withConnection(idempotent: true) {
            connection throws(PostgresError) -> [(name: String, value: String)] in
            let result = try connection.execute(read, [])
            var settings: [(name: String, value: String)] = []
            for index in 0..<result.rowCount {
                let row = result.row(index)
                settings.append((try row.text(0), try row.text(1)))
            }
            return settings
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
