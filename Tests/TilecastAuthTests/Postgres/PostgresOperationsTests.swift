// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuth
import TilecastAuthTesting

@testable import TilecastAuthPostgres

/// Migrations, connection loss and the rate limiter, against a real server.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresOperationsTests {
    static let clients = PostgresConcurrencyTests.clients

    @Test("migrate() is idempotent, and of instances migrating at once exactly one applies each migration")
    func migrationsAreIdempotent() async throws {
        let schema = PostgresTestDatabase.uniqueSchema()
        let configuration = try PostgresTestDatabase.configuration(schema: schema)
        let stores = (0..<6).map { _ in PostgresGrantStore(clients: Self.clients, configuration: configuration) }
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for store in stores {
                group.addTask { try await store.migrate() }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(applied.filter { !$0.isEmpty } == [PostgresSchema.migrations.map(\.version)])
        #expect(try await stores[0].migrate() == [])
    }

    @Test("A database at version 1, with codes and grants in it, migrates to the current version and keeps working")
    func upgradeFromVersionOne() async throws {
        // Version 1 only, as a deployment of the previous release left it.
        let store = try await PostgresTestDatabase.store(migratedUpTo: 1, clients: Self.clients)
        let now = Date()
        let redeemedBefore = try await PostgresTestDatabase.insertCode(into: store, account: "account-1", at: now)
        let pending = try await PostgresTestDatabase.insertCode(into: store, account: "account-1", at: now)
        let first = PostgresTestDatabase.bareIssuance(account: "account-1", at: now)
        #expect(try await store.redeemCode(redeemedBefore.digest, issuing: first, at: now) == .redeemed)

        #expect(try await store.migrate() == Array(PostgresSchema.migrations.map(\.version).dropFirst()))
        #expect(try await store.schemaVersion() == PostgresSchema.currentVersion)

        let later = now.addingTimeInterval(1)
        let second = PostgresTestDatabase.bareIssuance(account: "account-1", at: later)
        #expect(try await store.redeemCode(pending.digest, issuing: second, at: later) == .redeemed)
        let replay = try await store.redeemCode(redeemedBefore.digest, issuing: second, at: later)
        #expect(replay == .alreadyRedeemed(grant: first.grant.id))
        let revoked = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: later)
        #expect(Set(revoked.map(\.id)) == [first.grant.id, second.grant.id])
        #expect(try await store.removeExpired(at: later.addingTimeInterval(601)) >= 1)
    }

    /// What the database itself accepts in a secret's column, whatever the library sends: a raw secret
    /// (43 characters of base64url), a digest in hex (64) or a truncated one never reaches a row. Since
    /// migration 8 the rules are the columns' domains rather than table constraints; every column keeps
    /// its rule, and a 32-byte digest still goes in, so a rule that refused everything fails here too.
    @Test("Every secret's column takes only 32-byte digests, and a refresh token's state only 0, 1 or 2")
    func secretColumnsTakeOnlyDigests() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let schema = store.configuration.quotedSchema
        let grant = "'\(UUID().uuidString.lowercased())'"
        try await store.execute(
            script: """
                INSERT INTO \(schema).grants (id, client_id, account_id, scope, created_at, expires_at)
                VALUES (\(grant), 'tilecast-ios', 'account-1', 'profile', 0, 1e9)
                """
        )
        var fills = 0
        /// A `bytea` literal of `length` bytes, each write's own.
        func digest(_ length: Int = 32) -> String {
            fills += 1
            return "'\\x" + String(repeating: String(format: "%02x", fills % 256), count: length) + "'"
        }
        let writes: [(column: String, sql: (String) -> String)] = [
            (
                "codes.digest",
                {
                    """
                    INSERT INTO \(schema).codes (digest, client_id, account_id, redirect_uri, scope, issued_at, expires_at)
                    VALUES (\($0), 'tilecast-ios', 'account-1', 'tilecast-ios://oauth/callback', 'profile', 0, 1e9)
                    """
                }
            ),
            (
                "grants.current_refresh_token",
                { "UPDATE \(schema).grants SET current_refresh_token = \($0) WHERE id = \(grant)" }
            ),
            ("grants.session", { "UPDATE \(schema).grants SET session = \($0) WHERE id = \(grant)" }),
            (
                "refresh_tokens.digest",
                { "INSERT INTO \(schema).refresh_tokens VALUES (\($0), \(grant), 0, 1e9, 0, NULL, NULL)" }
            ),
            (
                "refresh_tokens.successor",
                { "INSERT INTO \(schema).refresh_tokens VALUES (\(digest()), \(grant), 0, 1e9, 1, 0, \($0))" }
            ),
            ("access_tokens.digest", { "INSERT INTO \(schema).access_tokens VALUES (\($0), \(grant), 0, 1e9)" }),
            ("sessions.digest", { "INSERT INTO \(schema).sessions VALUES (\($0), \(grant), 0, 1e9)" }),
        ]
        for (column, sql) in writes {
            try await store.execute(script: sql(digest()))
            for length in [0, 31, 33, 43, 64] {
                let error = await #expect(throws: PostgresError.self, "\(column) took \(length) bytes") {
                    try await store.execute(script: sql(digest(length)))
                }
                #expect(error?.sqlState == "23514", "\(column), \(length) bytes: \(String(describing: error))")
            }
        }
        let state = { (state: Int) in
            "INSERT INTO \(schema).refresh_tokens VALUES (\(digest()), \(grant), 0, 1e9, \(state), 0, NULL)"
        }
        try await store.execute(script: state(2))
        for unknown in [-1, 3, 7] {
            let error = await #expect(throws: PostgresError.self, "a refresh token took state \(unknown)") {
                try await store.execute(script: state(unknown))
            }
            #expect(error?.sqlState == "23514")
        }
    }

    /// Migration 8 changes the type of a secret's column on a database in use. A domain with its check
    /// already in place would make PostgreSQL rewrite every such table and its indexes, holding their
    /// exclusive locks throughout; created bare and checked after, the change is a catalog update.
    @Test("Migration 8 moves the columns to their domains without rewriting a table or an index, and keeps every row")
    func migrationEightRewritesNothing() async throws {
        // Versions 1 to 7, as the release before left a database.
        let store = try await PostgresTestDatabase.store(migratedUpTo: 7, clients: Self.clients)
        defer { store.close() }
        #expect(try await store.schemaVersion() == 7)
        let now = Date()
        let (code, grant, token) = try await PostgresTestDatabase.codeAndGrant(in: store, account: "account-1", at: now)
        let successor = try await PostgresTestDatabase.rotate(token, of: grant, in: store, at: now)
        let before = try await store.storageFiles()
        #expect(before.count >= 10, "the tables and their indexes: \(before)")

        #expect(try await store.migrate() == [8, 9])
        #expect(try await store.storageFiles() == before)
        #expect(try await store.authorizationCode(code.digest) != nil)
        let lookup = try await store.refreshToken(successor.digest)
        #expect(lookup?.grant.id == grant && lookup?.grant.currentRefreshToken == successor.digest)
        #expect(
            try await store.refreshToken(token.digest)?.token.state
                == .rotated(rotatedAt: now, successor: successor.digest)
        )
        _ = try await PostgresTestDatabase.rotate(successor, of: grant, in: store, at: now)
    }

    /// Migration 9 adds the rate limits' `granted` column on a database whose instances are running: a
    /// catalog change (a constant default, no rewrite), after which version 8's admission, which never
    /// names the column, goes on working, and it records 8 as kept working.
    @Test("Migration 9 adds a column without rewriting the table, and version 8's admissions go on working")
    func migrationNineKeepsVersionEightWorking() async throws {
        let store = try await PostgresTestDatabase.store(migratedUpTo: 8, clients: Self.clients)
        defer { store.close() }
        let quoted = store.configuration.quotedSchema
        let versionEightAdmit = PostgresStatement(
            name: "test_version_8_rate_limit_admit",
            sql: """
                INSERT INTO \(quoted).rate_limits AS r (key, tokens, updated_at)
                SELECT $1, $3 - 1, $2 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS asynchronous
                ON CONFLICT (key) DO UPDATE SET
                    tokens = least($3, r.tokens + greatest(0, $2 - r.updated_at) / $4) - 1,
                    updated_at = greatest(r.updated_at, $2)
                WHERE least($3, r.tokens + greatest(0, $2 - r.updated_at) / $4) >= 1
                RETURNING r.tokens
                """
        )
        let connection = try PostgresConnection.open(store.configuration)
        let parameters: [PostgresValue] = [.text("peer:192.0.2.94"), .date(Date()), .float8(100), .float8(1)]
        #expect(try connection.execute(versionEightAdmit, parameters).rowCount == 1)
        let before = try await store.storageFiles()

        #expect(try await store.migrate() == [9])
        #expect(try await store.storageFiles() == before)
        #expect(try connection.execute(versionEightAdmit, parameters).row(0).float8(0) == 98)
        let limiter = PostgresRateLimiter(configuration: store.configuration)
        defer { limiter.close() }
        #expect(try await limiter.admit(.peer("192.0.2.94"), at: Date()) == .admitted)
        let recorded = PostgresStatement(
            name: "test_oldest_compatible",
            sql: "SELECT oldest_compatible FROM \(quoted).schema_migrations WHERE version = 9"
        )
        #expect(try connection.execute(recorded, []).row(0).int4(0) == 8)
    }

    /// Migration 8 takes the exclusive locks of five tables. Waiting without a bound for one that another
    /// session holds would keep the tables it already changed locked, and every request waiting behind
    /// them; it gives up instead, within its `lock_timeout` (three seconds at PostgreSQL's default
    /// `deadlock_timeout`), having changed nothing, and succeeds once the table is free.
    @Test("Migration 8 gives up within its lock timeout while another session holds a table, and changes nothing")
    func migrationEightGivesUpOnABusyTable() async throws {
        let store = try await PostgresTestDatabase.store(migratedUpTo: 7, clients: Self.clients)
        defer { store.close() }
        let (_, grant, token) = try await PostgresTestDatabase.codeAndGrant(
            in: store,
            account: "account-1",
            at: Date()
        )
        let before = try await store.storageFiles()
        let holder = try PostgresTestDatabase.holdRows(
            of: store,
            in: "refresh_tokens",
            where: "grant_id = '\(grant.rawValue.uuidString.lowercased())'"
        )
        // Should the migration wait anyway, the server ends the holder's transaction after 15 s, so the
        // test fails on the time it took rather than hanging.
        try holder.execute(script: "SET LOCAL idle_in_transaction_session_timeout = '15s'")

        let started = ContinuousClock.now
        let error = await #expect(throws: PostgresError.self) { try await store.migrate() }
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(error?.sqlState == "55P03", "\(String(describing: error))")
        #expect(try await store.schemaVersion() == 7)
        #expect(try await store.storageFiles() == before)
        #expect(try await store.refreshToken(token.digest)?.grant.id == grant)

        try holder.execute(script: "COMMIT")
        #expect(try await store.migrate() == [8, 9])
        #expect(try await store.refreshToken(token.digest)?.grant.id == grant)
    }

    /// A migration that changes the type of a column a prepared statement returns — as migration 8 did,
    /// from `bytea` to a domain — makes PostgreSQL refuse that statement on every connection that prepared
    /// it before ("cached plan must not change result type", SQLSTATE 0A000), call after call, until it is
    /// prepared again. An instance running while another migrates must not be left failing its lookups.
    @Test(
        "A statement prepared before a migration changed its result's type is prepared again, and the lookup goes through"
    )
    func statementsPreparedBeforeATypeChangeArePreparedAgain() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients, maximumConnections: 1)
        defer { store.close() }
        let now = Date()
        let (code, grant, token) = try await PostgresTestDatabase.codeAndGrant(in: store, account: "account-1", at: now)
        let (revokedBefore, _) = try await PostgresTestDatabase.createGrant(
            in: store,
            account: "account-1",
            at: now,
            refreshTokenLifetime: 3600
        )
        let (revokedAfter, _) = try await PostgresTestDatabase.createGrant(
            in: store,
            account: "account-1",
            at: now,
            refreshTokenLifetime: 3600
        )
        // Prepared on the pool's one connection: two reads, and a write that returns the grant's row.
        #expect(try await store.authorizationCode(code.digest) != nil)
        #expect(try await store.refreshToken(token.digest)?.grant.id == grant)
        let first = try await store.revokeGrant(revokedBefore, reason: .revokedByServer, at: now)
        #expect(first == .revoked(try #require(await store.grant(revokedBefore))))

        let schema = store.configuration.quotedSchema
        let migration = try PostgresConnection.open(store.configuration)
        try migration.execute(
            script: """
                CREATE DOMAIN \(schema).account_name AS text;
                ALTER TABLE \(schema).codes ALTER COLUMN account_id TYPE \(schema).account_name;
                ALTER TABLE \(schema).grants ALTER COLUMN account_id TYPE \(schema).account_name;
                """
        )
        #expect(try await store.authorizationCode(code.digest)?.account == "account-1")
        #expect(try await store.refreshToken(token.digest)?.grant.account == "account-1")
        let second = try await store.revokeGrant(revokedAfter, reason: .revokedByServer, at: now)
        #expect(second == .revoked(try #require(await store.grant(revokedAfter))))
        let successor = try await PostgresTestDatabase.rotate(token, of: grant, in: store, at: now)
        #expect(try await store.refreshToken(successor.digest)?.grant.currentRefreshToken == successor.digest)
    }

    @Test("The server's durability settings are read in order, as the server itself reports them")
    func durabilitySettings() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let settings = try await store.durabilitySettings()
        #expect(settings.map(\.name) == ["server_version", "fsync", "synchronous_commit", "wal_sync_method"])

        let check = try PostgresConnection.open(store.configuration)
        let reported = try check.execute(
            PostgresStatement(
                name: "test_durability",
                sql: """
                    SELECT current_setting('server_version'), current_setting('fsync'),
                        current_setting('synchronous_commit'), current_setting('wal_sync_method')
                    """
            ),
            []
        )
        let row = reported.row(0)
        #expect(settings.map(\.value) == (0..<4).map { try? row.text($0) })
    }

    @Test("Every function of the schema runs with search_path pinned to pg_catalog, pg_temp")
    func functionsPinTheirSearchPath() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        let functions = try await store.functionSearchPaths()
        let names = Set(functions.map(\.name))
        #expect(
            names.isSuperset(of: [
                "redeem_code", "create_grant", "rotate_refresh_token", "replace_session", "revoke_account",
                "remove_expired",
            ])
        )
        for (name, setting) in functions {
            #expect(
                setting == "search_path=pg_catalog, pg_temp",
                "\(name) runs with \(setting ?? "the caller's search_path")"
            )
        }
    }

    /// `redeem_code` takes the account's lock shared, under the key `lock_account` computes, so a
    /// revocation of the account — which takes it exclusive — and a redemption never interleave. Were the
    /// two keys to differ, the redemption would finish while the revocation holds its lock.
    @Test("A code redemption waits while a revocation of its account holds the account's lock")
    func redemptionWaitsForTheAccountLock() async throws {
        let schema = PostgresTestDatabase.uniqueSchema()
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients, schema: schema)
        defer { store.close() }
        let now = Date()
        let code = try await PostgresTestDatabase.insertCode(into: store, account: "account-lock", at: now)

        let revocation = try PostgresConnection.open(store.configuration)
        try revocation.execute(
            script: "BEGIN; SELECT \(store.configuration.quotedSchema).lock_account('account-lock', true)"
        )
        let finished = LockedValue(false)
        let redemption = Task {
            defer { finished.withLock { $0 = true } }
            return try await store.redeemCode(
                code.digest,
                issuing: PostgresTestDatabase.bareIssuance(account: "account-lock", at: now),
                at: now
            )
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(!finished.withLock { $0 }, "the redemption went on while the account's lock was held")
        try revocation.execute(script: "COMMIT")
        #expect(try await redemption.value == .redeemed)
    }

    /// A redemption reads the code by its key. A plan through a partial index on `redeemed_grant IS NULL`
    /// would read every pending code instead — as version 2's conditional `UPDATE` was planned once the
    /// table had statistics — and make each redemption cost in proportion to the codes awaiting one.
    ///
    /// The server's counters are compared before and after the redemptions measured, each time once the
    /// counts of rows written say every backend's statistics have arrived: how the setup's redemptions
    /// were planned depends on whether autovacuum analyzed the table while it was small (then a scan of
    /// its one page beats the key), so it must not count.
    @Test("Redeeming a code reads it by its key, not through the index of every pending code")
    func redemptionReadsByKey() async throws {
        let schema = PostgresTestDatabase.uniqueSchema()
        let setup = try await PostgresTestDatabase.makeStore(clients: Self.clients, schema: schema)
        let now = Date()
        // As in service: most codes in the table are redeemed ones, kept until their grants expire, and the
        // statistics say so; then many codes await redemption at once.
        for _ in 0..<300 {
            let code = try await PostgresTestDatabase.insertCode(into: setup, account: "account-busy", at: now)
            let issuance = PostgresTestDatabase.bareIssuance(account: "account-busy", at: now)
            #expect(try await setup.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)
        }
        try await setup.analyze()
        var codes: [OpaqueToken] = []
        for _ in 0..<300 {
            codes.append(try await PostgresTestDatabase.insertCode(into: setup, account: "account-busy", at: now))
        }
        // A backend's statistics reach the shared counters when it exits.
        setup.close()
        let observer = try PostgresConnection.open(setup.configuration)
        // The connection's deadline is set for one operation; the waits for statistics take longer.
        observer.deadline = .now + .seconds(60)
        let before = try await ServerCounters.once(in: schema, through: observer) { counters in
            counters.codes.inserted >= 600 && counters.codes.updated >= 300
        }

        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients, schema: schema)
        for code in codes.prefix(20) {
            let issuance = PostgresTestDatabase.bareIssuance(account: "account-busy", at: now)
            #expect(try await store.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)
        }
        store.close()
        let after = try await ServerCounters.once(in: schema, through: observer) { counters in
            counters.codes.inserted >= 600 && counters.codes.updated >= 320
        }

        let pending = ["codes_unredeemed_account", "codes_unredeemed_expiry"]
        let partialReads = pending.map { after.entriesRead(of: $0) - before.entriesRead(of: $0) }.reduce(0, +)
        #expect(partialReads == 0, "the redemptions read \(partialReads) entries of the pending codes' indexes")
        let keyScans = after.scans(of: "codes_pkey") - before.scans(of: "codes_pkey")
        #expect(keyScans >= 20, "the redemptions did not read their codes by the key")
        #expect(after.codes.sequentialScans == before.codes.sequentialScans, "the redemptions scanned the codes' table")
    }

    /// The server's counters of the tables and indexes of one schema, as `pg_stat_user_tables` and
    /// `pg_stat_user_indexes` report them.
    struct ServerCounters {
        struct Table {
            var inserted: Int64 = 0
            var updated: Int64 = 0
            var deleted: Int64 = 0
            var sequentialScans: Int64 = 0
        }

        var tables: [String: Table] = [:]
        /// Scans and entries read, by index.
        var indexes: [String: (scans: Int64, entriesRead: Int64)] = [:]

        var codes: Table { tables["codes", default: Table()] }
        func scans(of index: String) -> Int64 { indexes[index]?.scans ?? 0 }
        func entriesRead(of index: String) -> Int64 { indexes[index]?.entriesRead ?? 0 }

        private static let readTables = PostgresStatement(
            name: "test_table_counters",
            sql: """
                SELECT relname::text, n_tup_ins, n_tup_upd, n_tup_del, coalesce(seq_scan, 0)
                FROM pg_stat_user_tables WHERE schemaname = $1
                """
        )
        private static let readIndexes = PostgresStatement(
            name: "test_index_counters",
            sql: """
                SELECT indexrelname::text, coalesce(idx_scan, 0), coalesce(idx_tup_read, 0)
                FROM pg_stat_user_indexes WHERE schemaname = $1
                """
        )
        private static let clearSnapshot = PostgresStatement(
            name: "test_clear_snapshot",
            sql: "SELECT pg_stat_clear_snapshot()"
        )

        /// The counters once `arrived` says the statistics looked for are in: a closed store's backends
        /// report theirs as they exit. Waits at most 10 seconds.
        static func once(
            in schema: String,
            through observer: PostgresConnection,
            until arrived: (ServerCounters) -> Bool
        ) async throws -> ServerCounters {
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                _ = try observer.execute(clearSnapshot, [])
                var counters = ServerCounters()
                for row in try observer.execute(readTables, [.text(schema)]).rows {
                    counters.tables[try row.text(0)] = Table(
                        inserted: try row.int8(1),
                        updated: try row.int8(2),
                        deleted: try row.int8(3),
                        sequentialScans: try row.int8(4)
                    )
                }
                for row in try observer.execute(readIndexes, [.text(schema)]).rows {
                    counters.indexes[try row.text(0)] = (scans: try row.int8(1), entriesRead: try row.int8(2))
                }
                if arrived(counters) { return counters }
                guard ContinuousClock.now < deadline else {
                    Issue.record("the statistics never arrived: \(counters.tables)")
                    return counters
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Pruning's work is what expired, not the tables: each call locks the expired rows through the expiry
    /// indexes and deletes them where it locked them. Version 4 deleted `WHERE key IN (the locked rows)`,
    /// which PostgreSQL joins by hashing the locked rows and reading the whole table once a few percent
    /// of it expire: 64 ms against 5.5 ms to delete 2,400 of 200,000 access tokens.
    @Test("removeExpired reads the rows that expired, not every row of a table")
    func removalReadsOnlyWhatExpired() async throws {
        let schema = PostgresTestDatabase.uniqueSchema()
        let setup = try await PostgresTestDatabase.makeStore(clients: Self.clients, schema: schema)
        let quoted = setup.configuration.quotedSchema
        // 5,000 grants, each with a redeemed code, tokens and a session, and 5,000 codes awaiting
        // redemption; one of each expires every second from t0 + 1,000 (the tokens and session half a
        // second before their grant).
        let t0 = Date().timeIntervalSinceReferenceDate.rounded()
        let rows = 5_000
        try await setup.execute(
            script: """
                INSERT INTO \(quoted).grants SELECT md5(i::text)::uuid, 'tilecast-ios', 'account-' || i % 97,
                    'profile', \(t0), \(t0) + 1000 + i, NULL, NULL, NULL, NULL FROM generate_series(1, \(rows)) i;
                INSERT INTO \(quoted).codes SELECT sha256(('redeemed' || i)::bytea), 'tilecast-ios', 'account-' || i % 97,
                    'tilecast-ios://oauth/callback', 'profile', NULL, NULL, \(t0), \(t0) + 60, md5(i::text)::uuid, \(t0)
                    FROM generate_series(1, \(rows)) i;
                INSERT INTO \(quoted).codes SELECT sha256(('pending' || i)::bytea), 'tilecast-ios', 'account-' || i % 97,
                    'tilecast-ios://oauth/callback', 'profile', NULL, NULL, \(t0), \(t0) + 1000 + i, NULL, NULL
                    FROM generate_series(1, \(rows)) i;
                INSERT INTO \(quoted).access_tokens SELECT sha256(('access' || i)::bytea), md5(i::text)::uuid,
                    \(t0), \(t0) + 999.5 + i FROM generate_series(1, \(rows)) i;
                INSERT INTO \(quoted).refresh_tokens SELECT sha256(('refresh' || i)::bytea), md5(i::text)::uuid,
                    \(t0), \(t0) + 999.5 + i, 0, NULL, NULL FROM generate_series(1, \(rows)) i;
                INSERT INTO \(quoted).sessions SELECT sha256(('session' || i)::bytea), md5(i::text)::uuid,
                    \(t0), \(t0) + 999.5 + i FROM generate_series(1, \(rows)) i;
                """
        )
        try await setup.analyze()
        setup.close()
        let observer = try PostgresConnection.open(setup.configuration)
        observer.deadline = .now + .seconds(60)
        let before = try await ServerCounters.once(in: schema, through: observer) { counters in
            counters.codes.inserted >= Int64(2 * rows)
        }

        // Three calls, a hundred seconds apart: each removes 2 % of every table.
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients, schema: schema)
        for call in 1...3 {
            let now = Date(timeIntervalSinceReferenceDate: t0 + 1000 + Double(100 * call))
            // Of each of six kinds: codes unredeemed and redeemed, three kinds of token, grants.
            #expect(try await store.removeExpired(at: now) == 100 * 6, "call \(call)")
        }
        store.close()
        let after = try await ServerCounters.once(in: schema, through: observer) { counters in
            counters.tables["grants", default: .init()].deleted >= 300
        }
        for table in ["codes", "grants", "access_tokens", "refresh_tokens", "sessions"] {
            let (start, end) = (before.tables[table, default: .init()], after.tables[table, default: .init()])
            let scans = end.sequentialScans - start.sequentialScans
            #expect(scans == 0, "removeExpired read the whole of \(table) \(scans) times")
        }
    }

    /// A rotation's statements run on plans the server keeps for the connection. Version 1's
    /// `rotate_refresh_token` retired the presented and the replaced token in one `UPDATE … WHERE digest =
    /// p_presented OR (digest = p_current AND p_presented <> p_current)`. Its generic plan — a union of two
    /// lookups by the key with a thousand tokens in the table, a scan of it with a few hundred — cost more
    /// than the plan for a plain rotation's values, so the server planned it again on every call: 24 µs of
    /// each refresh. The server counts plans only where `pg_stat_statements.track_planning` is on, so the
    /// store's one connection turns it on at its start; `pg_stat_statements` must be preloaded with
    /// `track = all`, as `.ci/with-postgres` does.
    @Test("A rotation's statements run on the connection's cached plans, not planned again on every call")
    func rotationIsNotReplanned() async throws {
        let tracked = try Self.planTrackingURL()
        let schema = PostgresTestDatabase.uniqueSchema()
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(databaseURL: tracked, schema: schema, maximumConnections: 1)
        )
        try await store.migrate()
        let now = Date()
        func signIn() async throws -> GrantIssuance {
            var issuance = PostgresTestDatabase.bareIssuance(account: "account-replan", at: now)
            let token = PostgresTestDatabase.refreshToken(of: issuance.grant.id, at: now)
            issuance.grant.currentRefreshToken = token.digest
            issuance.refreshToken = token
            let code = try await PostgresTestDatabase.insertCode(into: store, account: "account-replan", at: now)
            #expect(try await store.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)
            return issuance
        }
        // As in service: a table of many tokens, with the statistics that say so. With a few hundred,
        // version 1's statement kept a generic plan that read the whole table instead.
        for _ in 0..<1_000 { _ = try await signIn() }
        try await store.analyze()
        let issuance = try await signIn()
        var current = try #require(issuance.refreshToken).digest
        let rotations = 60
        // Plain rotations, as a client's refreshes almost always are: the presented token is the current one.
        for index in 0..<rotations {
            let successor = PostgresTestDatabase.refreshToken(of: issuance.grant.id, at: now)
            let outcome = try await store.rotateRefreshToken(
                current,
                replacing: current,
                successor: successor,
                accessToken: PostgresTestDatabase.accessToken(of: issuance.grant.id, at: now),
                at: now
            )
            #expect(outcome == .rotated, "rotation \(index)")
            current = successor.digest
        }
        store.close()

        // The call and the two statements a plain rotation runs inside it (the locks, then every write in
        // one statement since migration 7), each run once per rotation.
        try Self.expectPlansKept(in: schema, calls: rotations, naming: ["refresh_token"], atLeast: 3, of: "rotation")
    }

    /// Creating a grant checks the account's revocations with a statement the connection keeps a plan
    /// of. Version 2's `create_grant` asked `account_revoked_since`, a `LANGUAGE sql` function with a `SET`
    /// clause: never inlined, and PostgreSQL 15 keeps no plan of a SQL function's statement between calls,
    /// so its `EXISTS` was planned for every grant created (found by a review).
    @Test("A refresh's rotation and the Studio session it starts are one round trip, and roll back together")
    func rotationStartingSessionIsOneRoundTrip() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients, maximumConnections: 1)
        defer { store.close() }
        let now = Date()
        let (grant, token) = try await PostgresTestDatabase.createGrant(
            in: store,
            account: "account-one-trip",
            at: now,
            refreshTokenLifetime: 3600
        )
        func newSession(of grant: GrantID) -> StudioSession {
            StudioSession(
                digest: OpaqueToken.mint(.studioSession, using: SystemRandomSource()).digest,
                grant: grant,
                startedAt: now,
                expiresAt: now.addingTimeInterval(600)
            )
        }
        let successor = PostgresTestDatabase.refreshToken(of: grant, at: now)
        let session = newSession(of: grant)
        let before = store.statistics.roundTrips
        let outcome = try await store.rotateRefreshToken(
            token.digest,
            replacing: token.digest,
            successor: successor,
            accessToken: PostgresTestDatabase.accessToken(of: grant, at: now),
            startingSession: session,
            at: now
        )
        #expect(outcome == .rotated)
        // The first call of a statement on a connection prepares it: one round trip more, once.
        #expect(store.statistics.roundTrips - before <= 2)
        let second = PostgresTestDatabase.refreshToken(of: grant, at: now)
        let nextSession = newSession(of: grant)
        let prepared = store.statistics.roundTrips
        #expect(
            try await store.rotateRefreshToken(
                successor.digest,
                replacing: successor.digest,
                successor: second,
                accessToken: PostgresTestDatabase.accessToken(of: grant, at: now),
                startingSession: nextSession,
                at: now
            ) == .rotated
        )
        #expect(store.statistics.roundTrips - prepared == 1)
        let lookup = try #require(try await store.session(nextSession.digest))
        #expect(lookup.grant.session == nextSession.digest)
        #expect(lookup.grant.currentRefreshToken == second.digest)
        #expect(try await store.session(session.digest) == nil)

        // A session for another grant is refused as not found before anything is written: nothing rotates.
        let stray = newSession(of: GrantID(rawValue: UUID()))
        let third = PostgresTestDatabase.refreshToken(of: grant, at: now)
        #expect(
            try await store.rotateRefreshToken(
                second.digest,
                replacing: second.digest,
                successor: third,
                accessToken: PostgresTestDatabase.accessToken(of: grant, at: now),
                startingSession: stray,
                at: now
            ) == .notFound
        )
        #expect(try await store.refreshToken(third.digest) == nil)
        #expect(try await store.refreshToken(second.digest)?.grant.currentRefreshToken == second.digest)
        #expect(try await store.session(stray.digest) == nil)
    }

    @Test("Creating a grant runs its statements on the connection's cached plans")
    func grantCreationIsNotReplanned() async throws {
        let schema = PostgresTestDatabase.uniqueSchema()
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(
                databaseURL: try Self.planTrackingURL(),
                schema: schema,
                maximumConnections: 1
            )
        )
        try await store.migrate()
        let now = Date()
        // A revocation on record, of another account, so that the check reads an index that has entries.
        _ = try await store.revokeGrants(of: "account-revoked", reason: .revokedByServer, at: now)
        let creations = 60
        for _ in 0..<creations {
            let issuance = PostgresTestDatabase.bareIssuance(account: "account-created", at: now.addingTimeInterval(1))
            #expect(try await store.createGrant(issuance) == .created)
        }
        store.close()

        // The call, the revocation check and the insert, each run once per grant created.
        try Self.expectPlansKept(
            in: schema,
            calls: creations,
            naming: ["create_grant", "account_revocations", "INSERT INTO"],
            atLeast: 3,
            of: "creation"
        )
    }

    /// The statements `pg_stat_statements` saw in `schema` that ran exactly `calls` times and name one of
    /// `names`, with how often each was planned (counted where `track_planning` was on).
    static func plannedStatements(
        in schema: String,
        calls: Int,
        naming names: [String]
    ) throws -> [(plans: Int64, query: String)] {
        let observer = try PostgresConnection.open(try PostgresTestDatabase.configuration(schema: schema))
        _ = try? observer.execute(script: "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        let statement = PostgresStatement(
            name: "test_planned_statements",
            sql: """
                SELECT s.plans, s.query FROM pg_stat_statements s
                WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND strpos(s.query, $1) > 0 AND s.calls = $2
                """
        )
        let result = try observer.execute(statement, [.text(schema), .int4(Int32(calls))])
        return try (0..<result.rowCount).compactMap { index in
            let row = result.row(index)
            let (plans, query) = (try row.int8(0), try row.text(1))
            return names.contains(where: { query.contains($0) }) ? (plans, query) : nil
        }
    }

    /// Expects at least `count` statements of `schema` run exactly `calls` times and naming one of
    /// `names`, each planned at least once and at most for half of its calls: a statement planned on
    /// every call is one whose generic plan the server refused. A few plans more than six are schema
    /// changes elsewhere in the database (a parallel test's migration), each of which drops every cached
    /// plan.
    static func expectPlansKept(
        in schema: String,
        calls: Int,
        naming names: [String],
        atLeast count: Int,
        of operation: String
    ) throws {
        let statements = try plannedStatements(in: schema, calls: calls, naming: names)
        #expect(
            statements.count >= count,
            "pg_stat_statements saw \(statements.count) of the \(operation)'s statements; is it preloaded with track = all?"
        )
        for statement in statements {
            #expect(statement.plans >= 1, "no plans counted: track_planning did not take effect: \(statement.query)")
            #expect(
                statement.plans <= Int64(calls / 2),
                "planned \(statement.plans) times in \(calls) calls: \(statement.query)"
            )
        }
    }

    /// A URL for `PostgresTestDatabase.url`'s server whose connections count their plans in
    /// `pg_stat_statements` (`track_planning`, a superuser's setting, as the test cluster's user is).
    static func planTrackingURL() throws -> String {
        let url = try #require(PostgresTestDatabase.url)
        let option = "-c pg_stat_statements.track_planning=on"
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            return url + " options='\(option)'"
        }
        let encoded = option.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "=", with: "%3D")
        return url + (url.contains("?") ? "&" : "?") + "options=" + encoded
    }

    /// A retry within the leeway retires the successor it replaces, which must still be stored. When
    /// `removeExpired` takes that successor while the retry waits for its grant's row, the retry must find
    /// it gone and write nothing — `.superseded`, as the in-memory store, whose steps never interleave,
    /// answers for a retry after the removal. The first version of migration 4 read the successor's
    /// presence in the snapshot its statement started with, before the wait, and rotated (found by a
    /// review).
    @Test("A leeway retry that waited for its grant's row sees the successor removed meanwhile, and writes nothing")
    func retryAfterConcurrentRemoval() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let t0 = Date()
        let (grant, presented) = try await PostgresTestDatabase.createGrant(
            in: store,
            account: "account-retry",
            at: t0,
            refreshTokenLifetime: 3000
        )
        // The successor expires a minute on, long before the token it replaced and the grant.
        let successor = try await PostgresTestDatabase.rotate(
            presented,
            of: grant,
            in: store,
            at: t0,
            successorLifetime: 60
        )

        // Another session holds the grant's row, as a session replacement does for a moment.
        let holder = try PostgresTestDatabase.holdRows(
            of: store,
            in: "grants",
            where: "id = '\(grant.rawValue.uuidString)'"
        )
        let later = t0.addingTimeInterval(61)
        let retried = PostgresTestDatabase.refreshToken(of: grant, at: later, lifetime: 3000)
        let retriedAccess = PostgresTestDatabase.accessToken(of: grant, at: later)
        let retry = Task {
            try await store.rotateRefreshToken(
                presented.digest,
                replacing: successor.digest,
                successor: retried,
                accessToken: retriedAccess,
                at: later
            )
        }
        try await Self.waitForLockWaiters(of: store.configuration, count: 1)
        #expect(try await store.removeExpired(at: later) >= 1)
        // Seen after the removal, before the retry returns: the successor gone, the grant not yet rotated.
        // The retry can then only have happened after the removal.
        #expect(try await store.refreshToken(successor.digest) == nil, "removeExpired kept the expired successor")
        #expect(try await store.grant(grant)?.currentRefreshToken == successor.digest)
        try holder.execute(script: "COMMIT")

        let outcome = try await retry.value
        guard case .superseded = outcome else {
            Issue.record("the retry returned \(outcome) after its successor was removed")
            return
        }
        #expect(try await store.refreshToken(retried.digest) == nil, "a refused retry stored its successor")
        #expect(try await store.accessToken(retriedAccess.digest) == nil, "a refused retry stored its access token")
        let after = try await store.refreshToken(presented.digest)
        #expect(after?.token.state == .rotated(rotatedAt: t0, successor: successor.digest))
        #expect(after?.grant.currentRefreshToken == successor.digest, "a refused retry moved the grant's token")
    }

    /// The same for the presented token: a rotation that waited for its grant's row must find the token
    /// it presents still stored. Migration 1's `UPDATE grants … FROM refresh_tokens` re-checked only the
    /// grant's row after the wait and joined the token as it was before, so a rotation went ahead after
    /// `removeExpired` had taken the presented token (here by a remover whose clock is 21 s ahead of the
    /// rotating instance's), where the in-memory store answers `.notFound` (found by a review).
    @Test(
        "A rotation that waited for its grant's row sees its presented token removed meanwhile, and writes nothing",
        arguments: [false, true]
    )
    func rotationAfterPresentedTokenRemoval(retry: Bool) async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let t0 = Date()
        // The presented token expires 50 s on; everything else lives long.
        let (grant, presented) = try await PostgresTestDatabase.createGrant(
            in: store,
            account: "account-presented",
            at: t0,
            refreshTokenLifetime: 50
        )
        var current = presented.digest
        if retry {
            current = try await PostgresTestDatabase.rotate(
                presented,
                of: grant,
                in: store,
                at: t0,
                successorLifetime: 3000
            ).digest
        }

        let holder = try PostgresTestDatabase.holdRows(
            of: store,
            in: "grants",
            where: "id = '\(grant.rawValue.uuidString)'"
        )
        let now = t0.addingTimeInterval(40)
        let next = PostgresTestDatabase.refreshToken(of: grant, at: now, lifetime: 3000)
        let nextAccess = PostgresTestDatabase.accessToken(of: grant, at: now)
        let replacing = current
        let rotation = Task {
            try await store.rotateRefreshToken(
                presented.digest,
                replacing: replacing,
                successor: next,
                accessToken: nextAccess,
                at: now
            )
        }
        try await Self.waitForLockWaiters(of: store.configuration, count: 1)
        #expect(try await store.removeExpired(at: t0.addingTimeInterval(61)) >= 1)
        // Seen after the removal, before the rotation returns: the token gone, the grant not rotated.
        #expect(try await store.refreshToken(presented.digest) == nil, "removeExpired kept the expired token")
        #expect(try await store.grant(grant)?.currentRefreshToken == current)
        try holder.execute(script: "COMMIT")

        let outcome = try await rotation.value
        #expect(outcome == .notFound, "the rotation returned \(outcome) after its presented token was removed")
        #expect(try await store.refreshToken(next.digest) == nil, "a refused rotation stored its successor")
        #expect(try await store.accessToken(nextAccess.digest) == nil, "a refused rotation stored its access token")
        #expect(try await store.grant(grant)?.currentRefreshToken == current, "a refused rotation moved the token")
        if retry {
            let stillCurrent = try await store.refreshToken(current)
            #expect(stillCurrent?.token.state == .active, "a refused retry retired the current token")
        }
    }

    /// A redemption reads its account's revocations in the statement that locks the code's row (migration
    /// 7), so a revocation that `removeExpired` takes while the redemption waits for that row still refuses
    /// the code — as the in-memory store refuses it until the revocation's retention ends by its own clock.
    /// Version 3 read the revocations again after the wait and redeemed the code. It takes a remover whose
    /// clock is past the revocation's retention (here 542 s ahead of the redeeming instance's), a code at
    /// its last moment, and a wait for the row (found by a review).
    @Test("A redemption that waited for its code's row still sees the account's revocation removed meanwhile")
    func redemptionAfterRevocationRemoval() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let revokedAt = Date()
        _ = try await store.revokeGrants(of: "account-pruned", reason: .revokedByServer, at: revokedAt)
        // A code issued at the revocation's instant, stored after it (as one issued just before it and
        // stored late would be): never redeemable. It expires 60 s on.
        let code = try await PostgresTestDatabase.insertCode(into: store, account: "account-pruned", at: revokedAt)
        let now = revokedAt.addingTimeInterval(59)
        let early = PostgresTestDatabase.bareIssuance(account: "account-pruned", at: now)
        #expect(try await store.redeemCode(code.digest, issuing: early, at: now) == .notFound)

        let holder = try PostgresTestDatabase.holdRows(
            of: store,
            in: "codes",
            where: "digest = '\\x\(code.digest.hexadecimal)'"
        )
        let issuance = PostgresTestDatabase.bareIssuance(account: "account-pruned", at: now)
        let redemption = Task { try await store.redeemCode(code.digest, issuing: issuance, at: now) }
        try await Self.waitForLockWaiters(of: store.configuration, count: 1)
        // The revocation's retention (600 s) has passed by the remover's clock: it goes; the code, held, stays.
        #expect(try await store.removeExpired(at: revokedAt.addingTimeInterval(601)) >= 1)
        try holder.execute(script: "ROLLBACK")

        let outcome = try await redemption.value
        #expect(outcome == .notFound, "the redemption returned \(outcome) after its account's revocation was removed")
        #expect(try await store.grant(issuance.grant.id) == nil, "a refused redemption stored its grant")
        #expect(try await store.authorizationCode(code.digest)?.redemption == nil)
    }

    /// `removeExpired` is maintenance: it must never wait for a row a request holds. Waiting is how it
    /// deadlocked — with `revokeGrants(of:)`, which deletes an account's codes in another order, and with
    /// a rotation across its grant's expiry, which locks the grant's row before its tokens' (found by
    /// reviews). It skips what is locked; the next call removes it.
    @Test("removeExpired skips the expired rows another transaction holds, and never waits for them")
    func removalSkipsLockedRows() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let now = Date()
        let held = try await PostgresTestDatabase.insertCode(into: store, account: "account-held", at: now)
        let free = try await PostgresTestDatabase.insertCode(into: store, account: "account-held", at: now)
        let later = now.addingTimeInterval(61)  // both codes expired

        let holder = try PostgresTestDatabase.holdRows(
            of: store,
            in: "codes",
            where: "digest = '\\x\(held.digest.hexadecimal)'"
        )
        let finished = LockedValue(false)
        let removal = Task {
            defer { finished.withLock { $0 = true } }
            return try await store.removeExpired(at: later)
        }
        // Until the removal has finished or waits for the held row; at most 5 s.
        let observer = try PostgresConnection.open(store.configuration)
        var waited = false
        for _ in 0..<500 where !finished.withLock({ $0 }) {
            if try Self.lockWaiters(of: store.configuration, on: observer) > 0 {
                waited = true
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(!waited, "removeExpired waited for a row another transaction holds")
        #expect(finished.withLock { $0 }, "removeExpired had not finished after 5 s")
        #expect(try await store.authorizationCode(free.digest) == nil, "the free expired code was kept")
        #expect(try await store.authorizationCode(held.digest) != nil, "the held code went while held")
        try holder.execute(script: "COMMIT")
        #expect(try await removal.value == 1)
        #expect(try await store.removeExpired(at: later) == 1)
        #expect(try await store.authorizationCode(held.digest) == nil)
    }

    /// A redeemed code goes with its grant, and no sooner: a replay holds the code's row (it locks the
    /// code, not the grant), so `removeExpired` skips the code — and must then keep the grant too, or the
    /// code, joined to a grant no longer there, is never removed (found by a review of the skipping).
    @Test("removeExpired keeps an expired grant while it skips the grant's redeemed code, and removes both later")
    func skippedRedeemedCodeKeepsItsGrant() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let now = Date()
        let code = try await PostgresTestDatabase.insertCode(into: store, account: "account-replayed", at: now)
        let issuance = PostgresTestDatabase.bareIssuance(account: "account-replayed", at: now)
        #expect(try await store.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)
        let later = issuance.grant.expiresAt.addingTimeInterval(1)

        // A replay's redemption holding the code's row.
        let replay = try PostgresTestDatabase.holdRows(
            of: store,
            in: "codes",
            where: "digest = '\\x\(code.digest.hexadecimal)'"
        )
        _ = try await store.removeExpired(at: later)
        #expect(try await store.authorizationCode(code.digest) != nil, "the held code went while held")
        #expect(try await store.grant(issuance.grant.id) != nil, "the held code's grant went without it")
        try replay.execute(script: "COMMIT")

        #expect(try await store.removeExpired(at: later) == 2)
        #expect(try await store.authorizationCode(code.digest) == nil, "the redeemed code outlived its grant")
        #expect(try await store.grant(issuance.grant.id) == nil)
    }

    /// Two instances pruning at once would each skip the rows the other locked, and could still wait for
    /// each other through a grant's cascade to its tokens. So one prunes and the other returns at once:
    /// `remove_expired` tries the schema's maintenance lock and, held elsewhere, does nothing.
    @Test("removeExpired returns at once, removing nothing, while another instance's removeExpired runs")
    func concurrentRemovalsDoNotOverlap() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let now = Date()
        let code = try await PostgresTestDatabase.insertCode(into: store, account: "account-pruned", at: now)
        let later = now.addingTimeInterval(61)

        // Another instance's removeExpired, in the middle of its transaction.
        let schema = store.configuration.quotedSchema
        let other = try PostgresConnection.open(store.configuration)
        try other.execute(
            script:
                "BEGIN; SELECT pg_advisory_xact_lock(hashtext('tilecast-auth maintenance'), hashtext('\(schema)'))"
        )
        #expect(try await store.removeExpired(at: later) == 0)
        #expect(try await store.authorizationCode(code.digest) != nil, "two removals ran at once")
        // The skipped call tells monitoring so: its 0 is not "nothing was expired".
        #expect(store.statistics.expiredRemovalsSkipped == 1)
        try other.execute(script: "COMMIT")
        #expect(try await store.removeExpired(at: later) == 1)
        #expect(try await store.authorizationCode(code.digest) == nil)
        #expect(try await store.removeExpired(at: later) == 0)
        #expect(store.statistics.expiredRemovalsSkipped == 1, "a call that found nothing expired counted as skipped")
    }

    /// Waits until `count` sessions of the store configured by `configuration` wait for a lock, for at
    /// most 5 s.
    static func waitForLockWaiters(of configuration: PostgresConfiguration, count: Int) async throws {
        let observer = try PostgresConnection.open(configuration)
        for _ in 0..<500 {
            if try lockWaiters(of: configuration, on: observer) >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(count) sessions did not wait for a lock within 5 s")
    }

    /// How many sessions of the store configured by `configuration` wait for a lock now; asked on
    /// `observer`, a connection of the test's own outside any transaction, so that each look is fresh.
    static func lockWaiters(of configuration: PostgresConfiguration, on observer: PostgresConnection) throws -> Int {
        let waiting = PostgresStatement(
            name: "test_lock_waiters",
            sql: """
                SELECT count(*)::int4 FROM pg_stat_activity
                WHERE application_name = $1 AND wait_event_type = 'Lock'
                """
        )
        let name: PostgresValue = .text("tilecast-auth/\(configuration.schema)")
        return Int(try observer.execute(waiting, [name]).row(0).int4(0))
    }

    @Test("A store refuses a database whose schema is newer than it knows")
    func newerSchemaIsRefused() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        let admin = try await PostgresTestDatabase.makeStore(clients: [], schema: store.configuration.schema)
        try await admin.execute(
            script:
                "INSERT INTO \(store.configuration.schema).schema_migrations (version, summary) VALUES (999, 'future')"
        )
        await #expect(throws: PostgresError.self) { try await store.migrate() }
        await #expect(throws: PostgresError.self) { try await store.schemaVersion() }
    }

    /// A rolling deploy: instances of the release before keep starting — a restart, a scale-out — while
    /// the new release's instances have migrated the database past what they know, for as long as each
    /// newer migration says the older statements still work against it.
    @Test("A store works on a newer schema whose migrations say they keep its version working")
    func compatibleNewerSchemaIsUsed() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        let schema = store.configuration.schema
        let current = PostgresSchema.currentVersion
        try await store.execute(
            script: """
                INSERT INTO "\(schema)".schema_migrations (version, summary, oldest_compatible)
                VALUES (\(current + 1), 'a later release', \(current)), (\(current + 2), 'and the one after', \(current - 1))
                """
        )
        // A restarted instance of the release before: it starts, and works.
        let restarted = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresTestDatabase.configuration(schema: schema)
        )
        #expect(try await restarted.migrate() == [])
        #expect(try await restarted.schemaVersion() == current + 2)
        let now = Date()
        let code = try await PostgresTestDatabase.insertCode(into: restarted, account: "account-rolling", at: now)
        let issuance = PostgresTestDatabase.bareIssuance(account: "account-rolling", at: now)
        #expect(try await restarted.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)

        // A migration that needs this library's successor ends it: no start, and no statement of its.
        try await store.execute(
            script: """
                INSERT INTO "\(schema)".schema_migrations (version, summary, oldest_compatible)
                VALUES (\(current + 3), 'a break', \(current + 1))
                """
        )
        let error = await #expect(throws: PostgresError.self) { try await restarted.migrate() }
        #expect(error?.kind == .schemaVersion)
        let message = error?.message ?? ""
        #expect(message.contains("needs a library of schema version \(current + 1)"), "\(message)")
        await #expect(throws: PostgresError.self) { try await restarted.schemaVersion() }
    }

    @Test("A connection the server closed is replaced before anything is sent; no operation fails")
    func lostConnectionsAreReplaced() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients, maximumConnections: 2)
        let grants = try await store.grants(of: "account-1")
        #expect(grants.isEmpty)
        let openedBefore = store.statistics.connectionsOpened

        // An administrator ends every backend of this schema's store (the idle pooled connections).
        let admin = try await PostgresTestDatabase.makeStore(clients: [], schema: PostgresTestDatabase.uniqueSchema())
        let terminated = try await admin.terminateBackends(of: store.configuration.schema)
        #expect(terminated >= 1)

        // A write first — writes are never retried, so only noticing the dead connection before sending
        // anything lets it through — then a read.
        let code = try await PostgresTestDatabase.insertCode(into: store, account: "account-1", at: Date())
        #expect(try await store.authorizationCode(code.digest)?.digest == code.digest)
        #expect(try await store.grants(of: "account-1").isEmpty)
        #expect(store.statistics.connectionsOpened > openedBefore)
    }

    @Test("An unreachable server is a thrown error — a 503 — never a crash or a hang")
    func unreachableServer() async throws {
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(
                databaseURL: "postgresql://127.0.0.1:1/none",
                schema: "tilecast",
                connectTimeout: 2
            )
        )
        await #expect(throws: PostgresError.self) { _ = try await store.grant(GrantID(rawValue: UUID())) }
        let engine = try AuthEngine(store: store, accounts: InMemoryAccountDirectory(activeAccounts: []))
        let response = await engine.handle(request: PostgresTestDatabase.unknownRefreshTokenRequest)
        #expect(response.status == 503)
    }

    @Test("The rate limiter counts attempts across instances and refuses past the capacity")
    func rateLimiterAcrossInstances() async throws {
        let configuration = try await Self.migratedLimiterSchema()
        let first = PostgresRateLimiter(configuration: configuration, capacity: 3, refillInterval: 10)
        let second = PostgresRateLimiter(configuration: configuration, capacity: 3, refillInterval: 10)
        let key = RateLimitKey.peer("192.0.2.77")
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await first.admit(key, at: t0) == .admitted)
        #expect(try await second.admit(key, at: t0) == .admitted)
        #expect(try await first.admit(key, at: t0) == .admitted)
        #expect(try await second.admit(key, at: t0) == .limited(retryAfterSeconds: 10))
        #expect(try await first.admit(key, at: t0.addingTimeInterval(4)) == .limited(retryAfterSeconds: 6))
        #expect(try await second.admit(key, at: t0.addingTimeInterval(10)) == .admitted)
        #expect(try await first.admit(RateLimitKey.peer("192.0.2.78"), at: t0) == .admitted)
    }

    /// An admission's transaction commits asynchronously — a bucket losing its last attempts in a crash
    /// is harmless, and each admission saves a WAL flush — and nothing of that stays on the connection
    /// afterwards: behind a pooler in transaction mode the next transaction on it may be the store's, whose
    /// commits must wait for the disk.
    @Test("An admission commits asynchronously, and leaves its connection as it found it")
    func admissionCommitsAsynchronously() async throws {
        let schema = PostgresTestDatabase.uniqueSchema()
        let store = try await PostgresTestDatabase.makeStore(clients: [], schema: schema)
        defer { store.close() }
        let connection = try PostgresConnection.open(store.configuration)
        let statements = PostgresStatements(schema: store.configuration.quotedSchema)
        let setting = PostgresStatement(
            name: "test_synchronous_commit",
            sql: "SELECT current_setting('synchronous_commit')"
        )
        let parameters: [PostgresValue] = [
            .text("peer:192.0.2.79"), .date(Date()), .float8(100), .float8(1), .int4(1),
        ]
        let serverDefault = try connection.execute(setting, []).row(0).text(0)

        try connection.execute(script: "BEGIN")
        #expect(try connection.execute(statements.rateLimitAdmit, parameters).rowCount == 1)
        #expect(try connection.execute(setting, []).row(0).text(0) == "off")
        try connection.execute(script: "COMMIT")

        #expect(try connection.execute(statements.rateLimitAdmit, parameters).rowCount == 1)
        #expect(try connection.execute(setting, []).row(0).text(0) == serverDefault)
        let limiter = PostgresRateLimiter(configuration: store.configuration)
        defer { limiter.close() }
        #expect(try await limiter.admit(.peer("192.0.2.79"), at: Date()) == .admitted)
        #expect(try await limiter.sessionSetting("synchronous_commit") == serverDefault)
    }

    /// Without leases, which may hold an attempt that no later task asks for (a strict-side loss that
    /// `rateLimiterLeasesUnderConcurrency` allows for), the count is exact.
    @Test("50 concurrent attempts through two limiters against a capacity of 10: exactly 10 admitted")
    func rateLimiterUnderConcurrency() async throws {
        let configuration = try await Self.migratedLimiterSchema()
        let limiters = [
            PostgresRateLimiter(configuration: configuration, capacity: 10, refillInterval: 3600, leaseSize: 1),
            PostgresRateLimiter(configuration: configuration, capacity: 10, refillInterval: 3600, leaseSize: 1),
        ]
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let decisions = await withTaskGroup(of: RateLimitDecision?.self) { group in
            for index in 0..<50 {
                let limiter = limiters[index % 2]
                group.addTask { try? await limiter.admit(RateLimitKey.peer("198.51.100.4"), at: now) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(decisions.filter { $0 == .admitted }.count == 10)
        #expect(decisions.filter { if case .limited = $0 { true } else { false } }.count == 40)
    }

    @Test("A key admitted again within moments is admitted from leases: a round trip for many attempts")
    func rateLimiterLeasesABusyKey() async throws {
        let configuration = try await Self.migratedLimiterSchema()
        let leasing = PostgresRateLimiter(
            configuration: configuration,
            capacity: 1000,
            refillInterval: 1,
            leaseSize: 32
        )
        let exact = PostgresRateLimiter(configuration: configuration, capacity: 1000, refillInterval: 1, leaseSize: 1)
        defer {
            leasing.close()
            exact.close()
        }
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<100 {
            let now = t0.addingTimeInterval(Double(index) / 1000)
            #expect(try await leasing.admit(.peer("192.0.2.90"), at: now) == .admitted)
            #expect(try await exact.admit(.peer("192.0.2.91"), at: now) == .admitted)
        }
        // Leases of 1, 2, 4, 8, 16 and 32 attempts, then 32 and 32: eight round trips for 100, and one
        // more to prepare the statement.
        #expect(leasing.statistics.roundTrips == 9)
        #expect(leasing.attemptsAdmittedFromLeases == 92)
        #expect(exact.statistics.roundTrips == 101)
        #expect(exact.attemptsAdmittedFromLeases == 0)
    }

    @Test("A key nearing its limit is admitted one attempt per round trip, to the last of its capacity")
    func rateLimiterLeasesOnlyTheTopHalf() async throws {
        let limiter = PostgresRateLimiter(
            configuration: try await Self.migratedLimiterSchema(),
            capacity: 10,
            refillInterval: 1,
            leaseSize: 32
        )
        defer { limiter.close() }
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<10 {
            #expect(try await limiter.admit(.peer("192.0.2.92"), at: t0) == .admitted)
        }
        // One lease of two, from 9 tokens down to 7; then 7 to 0 one by one: nine round trips for ten,
        // and one to prepare the statement.
        #expect(limiter.statistics.roundTrips == 10)
        #expect(limiter.attemptsAdmittedFromLeases == 1)
        #expect(try await limiter.admit(.peer("192.0.2.92"), at: t0) == .limited(retryAfterSeconds: 1))
    }

    /// The bucket's tokens and the attempts leased out stay below the capacity while a lease lasts, which
    /// holds because a lease lasts less than a refill: the bucket refills to full seconds after a lease of
    /// two, and a burst then may take its capacity and no more. A lease that outlived a refill (planted:
    /// a lifetime of four refills) admits an eleventh here.
    @Test("Attempts admitted from leases are ones a single exact bucket would admit as they came")
    func rateLimiterLeasesNeverExceedTheBucket() async throws {
        let configuration = try await Self.migratedLimiterSchema()
        let (capacity, refill) = (10, 1.0)
        let first = PostgresRateLimiter(
            configuration: configuration,
            capacity: capacity,
            refillInterval: refill,
            leaseSize: 32
        )
        let second = PostgresRateLimiter(
            configuration: configuration,
            capacity: capacity,
            refillInterval: refill,
            leaseSize: 32
        )
        defer {
            first.close()
            second.close()
        }
        let key = RateLimitKey.peer("192.0.2.93")
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var admittedAt: [Date] = []
        func attempt(_ limiter: PostgresRateLimiter, at time: Double) async throws {
            let now = t0.addingTimeInterval(time)
            if try await limiter.admit(key, at: now) == .admitted { admittedAt.append(now) }
        }
        try await attempt(first, at: 0)
        try await attempt(first, at: 0)  // a lease of two: one admitted, one held
        for _ in 0..<15 {
            try await attempt(first, at: 3)
            try await attempt(second, at: 3)
        }
        #expect(Self.refusedByOneExactBucket(admittedAt, capacity: capacity, refillInterval: refill, from: t0) == [])
        #expect(admittedAt.count == 12)
        #expect(first.attemptsAdmittedFromLeases == 1)
    }

    /// A lease's attempts are debited in one subtraction, where a bucket counting each as it came
    /// subtracts them one by one around a refill: the two round differently, here by 10⁻¹⁵ of an attempt
    /// on the last one (found by a review). The bucket admits an eleventh attempt at 60 s holding exactly
    /// one token, where one-by-one arithmetic holds 0.9999999999999991: the same attempt, to within the
    /// rounding the limiter documents.
    @Test("Leases and a one-by-one bucket differ only by the rounding of the bucket's arithmetic")
    func rateLimiterLeasesWithinRounding() async throws {
        let configuration = try await Self.migratedLimiterSchema()
        let (capacity, refill) = (10, 60.0)
        let limiter = PostgresRateLimiter(
            configuration: configuration,
            capacity: capacity,
            refillInterval: refill,
            leaseSize: 32
        )
        defer { limiter.close() }
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var admittedAt: [Date] = []
        for time in [0, 0, 0.7] + Array(repeating: 60.0, count: 13) {
            let now = t0.addingTimeInterval(time)
            if try await limiter.admit(.peer("192.0.2.95"), at: now) == .admitted { admittedAt.append(now) }
        }
        #expect(admittedAt.count == 11)
        #expect(limiter.attemptsAdmittedFromLeases == 2)
        #expect(Self.refusedByOneExactBucket(admittedAt, capacity: capacity, refillInterval: refill, from: t0) == [])
        let toTheLastBit = Self.refusedByOneExactBucket(
            admittedAt,
            capacity: capacity,
            refillInterval: refill,
            from: t0,
            tolerance: 0
        )
        #expect(toTheLastBit == [t0.addingTimeInterval(60)])
    }

    /// The configuration of a fresh schema, migrated, for limiters to share.
    static func migratedLimiterSchema() async throws -> PostgresConfiguration {
        let schema = PostgresTestDatabase.uniqueSchema()
        try await PostgresTestDatabase.makeStore(clients: [], schema: schema).close()
        return try PostgresTestDatabase.configuration(schema: schema)
    }

    /// Of `times`, those a single token bucket — full at `start`, counting each attempt as it came, in
    /// order — refuses, to within `tolerance` of an attempt (10⁻⁹ by default, for the rounding of `float8`
    /// arithmetic).
    static func refusedByOneExactBucket(
        _ times: [Date],
        capacity: Int,
        refillInterval: Double,
        from start: Date,
        tolerance: Double = 1e-9
    ) -> [Date] {
        var (tokens, last, refused) = (Double(capacity), start, [Date]())
        for time in times.sorted() {
            tokens = min(Double(capacity), tokens + max(0, time.timeIntervalSince(last)) / refillInterval)
            last = max(last, time)
            if tokens < 1 - tolerance { refused.append(time) } else { tokens -= 1 }
        }
        return refused
    }

    /// Real concurrent attempts through two leasing limiters over simulated time — a burst well past the
    /// capacity, a lull in which the bucket refills past half, then steady attempts that drain it — every
    /// attempt admitted is one a single exact bucket admits in the order of their times, some came from
    /// leases, and the bursts met the limit.
    @Test("Bursts through two leasing limiters admit nothing a single exact bucket would refuse")
    func rateLimiterLeasesUnderConcurrency() async throws {
        let configuration = try await Self.migratedLimiterSchema()
        // A token every millisecond, so a lease lasts a quarter of one: 2.5 steps of 0.1 ms.
        let (capacity, refill) = (40, 0.001)
        let limiters = [
            PostgresRateLimiter(
                configuration: configuration,
                capacity: capacity,
                refillInterval: refill,
                leaseSize: 32
            ),
            PostgresRateLimiter(
                configuration: configuration,
                capacity: capacity,
                refillInterval: refill,
                leaseSize: 32
            ),
        ]
        defer { limiters.forEach { $0.close() } }
        let key = RateLimitKey.peer("198.51.100.9")
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var decisions: [(Date, RateLimitDecision?)] = []
        var generator = SplitMix(state: 17)
        for step in 0..<1200 {
            let now = t0.addingTimeInterval(Double(step) * 0.0001)
            let phase = step % 400
            let attempts = phase < 10 ? 12 : phase < 300 ? 0 : 1 + Int(generator.next() % 3)
            guard attempts > 0 else { continue }
            let made = await withTaskGroup(of: RateLimitDecision?.self) { group in
                for index in 0..<attempts {
                    let limiter = limiters[index % 2]
                    group.addTask { try? await limiter.admit(key, at: now) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            decisions += made.map { (now, $0) }
        }
        #expect(!decisions.contains { $0.1 == nil })
        let admittedAt = decisions.filter { $0.1 == .admitted }.map(\.0)
        let admitted = admittedAt.count
        #expect(Self.refusedByOneExactBucket(admittedAt, capacity: capacity, refillInterval: refill, from: t0) == [])
        let fromLeases = limiters.map(\.attemptsAdmittedFromLeases).reduce(0, +)
        #expect(fromLeases > 0, "\(fromLeases) of \(admitted) admitted from leases")
        #expect(admitted < decisions.count, "every attempt admitted: the bursts never met the limit")
    }

    /// The in-memory store lists grants of one instant in the order of their ids' text, comparing their
    /// bytes (`GrantID.sortsBefore`): PostgreSQL's `ORDER BY created_at, id` on the `uuid` column, and
    /// the sort of what `revokeGrants(of:)` returns, must agree with it.
    @Test("An account's grants of one instant are listed and revoked in the order of their ids, as in memory")
    func grantsOfOneInstantInTheOrderOfTheirIds() async throws {
        let store = try await PostgresTestDatabase.makeStore(clients: Self.clients)
        defer { store.close() }
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
        let account: AccountID = "account-one-instant"
        let texts = [
            "A0000000-0000-4000-8000-000000000000", "0A000000-0000-4000-8000-000000000000",
            "9F000000-0000-4000-8000-000000000000", "0A000000-0000-4000-8000-000000000001",
            "09FFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
        ]
        var ids: [GrantID] = []
        for text in texts {
            var issuance = PostgresTestDatabase.bareIssuance(account: account, at: now)
            issuance.grant.id = GrantID(rawValue: try #require(UUID(uuidString: text)))
            #expect(try await store.createGrant(issuance) == .created)
            ids.append(issuance.grant.id)
        }
        let expected = ids.sorted { $0.sortsBefore($1) }
        #expect(expected.map(\.rawValue.uuidString) == texts.sorted())
        #expect(try await store.grants(of: account).map(\.id) == expected)
        #expect(try await store.revokeGrants(of: account, reason: .signedOut, at: now).map(\.id) == expected)
    }
}

extension PostgresGrantStore {
    /// Each function of the store's schema, with its `search_path` setting if it has one.
    func functionSearchPaths() async throws -> [(name: String, setting: String?)] {
        let statement = PostgresStatement(
            name: "test_function_search_paths",
            sql: """
                SELECT p.proname::text,
                    (SELECT c FROM unnest(p.proconfig) c WHERE c LIKE 'search\\_path=%')
                FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = $1 ORDER BY 1
                """
        )
        let schema: PostgresValue = .text(configuration.schema)
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            let result = try connection.execute(statement, [schema])
            var functions: [(name: String, setting: String?)] = []
            for index in 0..<result.rowCount {
                let row = result.row(index)
                functions.append((try row.text(0), try row.optionalText(1)))
            }
            return functions
        }
    }

    /// Each table and index of the store's schema with the file its data is in (`pg_class.relfilenode`),
    /// which a rewrite replaces.
    func storageFiles() async throws -> [String: Int] {
        let statement = PostgresStatement(
            name: "test_storage_files",
            sql: """
                SELECT c.relname::text, c.relfilenode::int8 FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')
                """
        )
        let schema: PostgresValue = .text(configuration.schema)
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            let result = try connection.execute(statement, [schema])
            var files: [String: Int] = [:]
            for index in 0..<result.rowCount {
                let row = result.row(index)
                files[try row.text(0)] = Int(try row.int8(1))
            }
            return files
        }
    }

    /// Runs SQL text on one of the store's connections.
    func execute(script: String) async throws {
        try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            try connection.execute(script: script)
        }
    }

    /// Terminates the server backends of the store on `schema` — what `pg_terminate_backend` by an
    /// administrator, or a server restart, does to a pool — and returns how many there were.
    func terminateBackends(of schema: String) async throws -> Int {
        let statement = PostgresStatement(
            name: "test_terminate",
            sql: "SELECT count(pg_terminate_backend(pid))::int4 FROM pg_stat_activity WHERE application_name = $1"
        )
        let remaining = PostgresStatement(
            name: "test_remaining",
            sql: "SELECT count(*)::int4 FROM pg_stat_activity WHERE application_name = $1"
        )
        let name: PostgresValue = .text("tilecast-auth/\(schema)")
        let terminated = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            Int(try connection.execute(statement, [name]).row(0).int4(0))
        }
        // Until the backends have really gone, so the next operation meets a closed connection.
        for _ in 0..<200 {
            let left = try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
                try connection.execute(remaining, [name]).row(0).int4(0)
            }
            if left == 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return terminated
    }
}
#endif
