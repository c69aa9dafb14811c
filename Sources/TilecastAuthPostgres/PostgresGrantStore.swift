// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
public import Foundation
public import TilecastAuth

/// A `GrantStore` on PostgreSQL: many server instances, one truth.
///
/// Every operation is one round trip and one transaction. The ones that must happen once — redeeming a
/// code, rotating a refresh token, replacing a session, revoking — are a conditional `UPDATE` or a
/// function that locks the one row the decision hangs on, so that of any number of concurrent callers,
/// in one process or many, exactly one wins (see `Docs/PostgreSQL.md` for the argument, operation by
/// operation). Only digests of secrets reach the database.
///
/// Clients are configuration, not data: the store knows the clients it was created with.
///
/// Call ``migrate()`` once at start-up (every instance may; they agree), and ``removeExpired(at:)``
/// periodically.
public final class PostgresGrantStore: GrantStore, Sendable {
    private let clients: [ClientID: Client]
    let pool: PostgresConnectionPool
    private let statements: PostgresStatements

    /// The configuration the store connects with.
    public var configuration: PostgresConfiguration { pool.configuration }

    /// Creates a store. No connection is made until the first operation.
    public init(clients: [Client], configuration: PostgresConfiguration) {
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.pool = PostgresConnectionPool(configuration: configuration)
        self.statements = PostgresStatements(schema: configuration.quotedSchema)
        self.remembered = RememberedRecords(capacity: configuration.rememberedRecords)
        // One thread more than connections: the one that never blocks (PostgresTaskExecutor).
        self.executor = PostgresTaskExecutor(maximumThreads: configuration.maximumConnections + 1)
    }

    private let executor: PostgresTaskExecutor

    /// The codes and refresh tokens this store wrote, which it answers ``rememberedAuthorizationCode(_:)``
    /// and ``rememberedRefreshToken(_:)`` from (``PostgresConfiguration/rememberedRecords``).
    private let remembered: RememberedRecords

    /// How many records the store remembers now.
    var rememberedRecordCount: Int { remembered.count }

    /// Calls of ``removeExpired(at:)`` that found another instance's under way, and removed nothing.
    private let expiredRemovalsSkipped = LockedValue(0)

    /// Where to run the requests that use this store, so that its statements — and those of any
    /// ``PostgresRateLimiter`` — wait for the server on the request's own thread:
    ///
    /// ```swift
    /// let response = await withTaskExecutorPreference(store.taskExecutor) {
    ///     await engine.handle(request: request)
    /// }
    /// ```
    ///
    /// libpq waits by blocking its thread, which a task on Swift's cooperative pool must not do, so
    /// elsewhere each statement is handed to a thread of its own and its answer handed back — two
    /// thread switches per round trip. On this executor's threads (``PostgresConfiguration/maximumConnections``
    /// + 1 at most, started as requests arrive and ended after ten idle seconds) libpq is called in place.
    /// One thread never blocks: a statement that finds the other threads all waiting on the server is
    /// handed off as elsewhere, so the wait for a connection, its timeout and cancellation hold as they
    /// do off the executor. Side by side on two cores with one caller: a code exchange 705 → 567 µs, a
    /// refresh 820 → 581 µs.
    public var taskExecutor: any TaskExecutor { executor }

    /// Closes the idle connections and refuses further operations.
    public func close() {
        pool.close()
    }

    /// Round trips to the server so far and connections opened, for the benchmark and for monitoring.
    public var statistics: PostgresStatistics {
        PostgresStatistics(
            roundTrips: pool.roundTrips,
            connectionsOpened: pool.connectionsOpened,
            connectionsRefused: pool.connectionsRefused,
            operationsInPlace: pool.operationsInPlace,
            transientRetries: pool.transientRetries,
            expiredRemovalsSkipped: expiredRemovalsSkipped.withLock { $0 },
            rememberedRecordsUsed: remembered.used,
            rememberedRecordsFoundStale: remembered.foundStale
        )
    }

    // MARK: Schema

    /// Creates the schema or brings it up to this library's version. Idempotent, and safe to call from
    /// several instances at once: an advisory lock lets one apply each migration while the others wait
    /// and then find nothing to do. A schema already at this version is left alone without any DDL, so
    /// a role without `CREATE` may call it too. Returns the versions it applied.
    ///
    /// A schema newer than this library knows is used as it is, and nothing applied, when each newer
    /// migration records that it keeps this library's version working: during a rolling deploy, the
    /// previous release's instances keep starting after the new release's first instance has migrated.
    /// (Releases before migration 5 do not read that record, and refuse any newer schema.)
    ///
    /// - Throws: ``PostgresError/Kind/schemaVersion`` when one of the database's migrations needs a later
    ///   library than this one.
    @discardableResult
    public func migrate() async throws -> [Int] {
        if let version = try await schemaVersion(), version >= PostgresSchema.currentVersion {
            return []
        }
        let schema = configuration.schema
        let quoted = configuration.quotedSchema
        let versions = PostgresStatement(
            name: "tilecast_migration_versions",
            sql: PostgresSchema.appliedVersionsSQL(schema: quoted)
        )
        return try await pool.withConnection(idempotent: true, maintenance: true) { connection throws(PostgresError) in
            try connection.execute(
                script: """
                    BEGIN ISOLATION LEVEL READ COMMITTED;
                    SET LOCAL statement_timeout = 0;
                    SELECT pg_advisory_xact_lock(hashtext('tilecast-auth migrations'), hashtext('\(schema)'));
                    CREATE SCHEMA IF NOT EXISTS \(quoted);
                    CREATE TABLE IF NOT EXISTS \(quoted).schema_migrations (
                        version integer PRIMARY KEY,
                        summary text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    );
                    """
            )
            do throws(PostgresError) {
                // Read after the lock, so an instance that waited sees what the first one applied.
                let rows = try PostgresSchema.AppliedMigration.rows(of: try connection.execute(versions, []))
                try Self.checkCompatibility(rows)
                let applied = Set(rows.map(\.version))
                var appliedNow: [Int] = []
                for migration in PostgresSchema.migrations where !applied.contains(migration.version) {
                    try connection.execute(script: PostgresSchema.sql(migration, schema: quoted))
                    try connection.execute(script: PostgresSchema.recordSQL(migration, schema: quoted))
                    appliedNow.append(migration.version)
                }
                try connection.execute(script: "COMMIT")
                return appliedNow
            } catch {
                try? connection.execute(script: "ROLLBACK")
                throw error
            }
        }
    }

    /// The schema version the database holds — `nil` before the first ``migrate()`` — for a server that
    /// runs its migrations at deploy time and only checks at start-up. It may be newer than this library
    /// knows where every newer migration keeps this library's version working (a rolling deploy, see
    /// ``migrate()``).
    ///
    /// - Throws: ``PostgresError/Kind/schemaVersion`` when one of the database's migrations needs a later
    ///   library than this one.
    public func schemaVersion() async throws -> Int? {
        let statement = PostgresStatement(
            name: "tilecast_schema_versions",
            sql: PostgresSchema.appliedVersionsSQL(schema: configuration.quotedSchema)
        )
        let rows = try await pool.withConnection(idempotent: true) {
            connection throws(PostgresError) -> [PostgresSchema.AppliedMigration] in
            do throws(PostgresError) {
                return try PostgresSchema.AppliedMigration.rows(of: try connection.execute(statement, []))
            } catch  where error.sqlState == "42P01" || error.sqlState == "3F000" {
                return []  // no schema_migrations table, or no schema
            }
        }
        try Self.checkCompatibility(rows)
        return rows.map(\.version).max()
    }

    /// Refuses a database one of whose migrations needs a later library than this one: newer than this
    /// library knows, and not saying that this library's version keeps working.
    private static func checkCompatibility(_ applied: [PostgresSchema.AppliedMigration]) throws(PostgresError) {
        guard let needed = applied.map(\.oldestCompatible).max(), needed > PostgresSchema.currentVersion else {
            return
        }
        let newest = applied.map(\.version).max() ?? needed
        throw PostgresError(
            .schemaVersion,
            message: "the database has schema version \(newest), which needs a library of schema version \(needed) "
                + "or later; this library knows up to \(PostgresSchema.currentVersion)"
        )
    }

    // MARK: GrantStore

    public func client(_ id: ClientID) async throws -> Client? {
        clients[id]
    }

    public func insertCode(_ code: AuthorizationCode) async throws {
        let parameters: [PostgresValue] = [
            .digest(code.digest), .text(code.client.rawValue), .text(code.account.rawValue), .text(code.redirectURI),
            .text(code.scope.rawValue), .text(code.challenge?.method.rawValue), .text(code.challenge?.value),
            .date(code.issuedAt), .date(code.expiresAt),
            code.redemption.map { .grant($0.grant) } ?? .null(.uuid), .date(code.redemption?.redeemedAt),
        ]
        let statement = statements.insertCode
        // Not idempotent: a lost connection may have committed the insert, and a second would collide.
        try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            _ = try connection.execute(statement, parameters)
        }
        remembered.inserted(code)
    }

    public func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        let statement = statements.code
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            let result = try connection.execute(statement, [.digest(digest)])
            return result.rowCount == 0 ? nil : try result.row(0).authorizationCode()
        }
    }

    /// The code as this store inserted it, until its redemption here; no round trip.
    public func rememberedAuthorizationCode(_ digest: SecretDigest) -> AuthorizationCode? {
        remembered.code(digest)
    }

    public func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws -> CodeRedemption {
        let grant = issuance.grant
        let parameters: [PostgresValue] =
            [
                .digest(digest), .date(now),
                .grant(grant.id), .text(grant.client.rawValue), .text(grant.account.rawValue),
                .text(grant.scope.rawValue), .date(grant.createdAt), .date(grant.expiresAt),
                .digest(grant.currentRefreshToken), .digest(grant.session),
            ] + Self.tokenParameters(of: issuance)
        let statement = statements.redeemCode
        let outcome: CodeRedemption = try await pool.withConnection(idempotent: false) {
            connection throws(PostgresError) in
            let row = try Self.single(try connection.execute(statement, parameters))
            switch try row.int2(0) {
            case 0: return .redeemed
            case 1: return .alreadyRedeemed(grant: try row.grantID(1))
            case 2: return .notFound
            default: throw PostgresError(.unexpectedResult, message: "redeem_code: an unknown outcome")
            }
        }
        remembered.redeemed(digest, issuing: issuance, outcome: outcome)
        return outcome
    }

    public func createGrant(_ issuance: GrantIssuance) async throws -> GrantCreation {
        let grant = issuance.grant
        let parameters: [PostgresValue] =
            [
                .grant(grant.id), .text(grant.client.rawValue), .text(grant.account.rawValue),
                .text(grant.scope.rawValue), .date(grant.createdAt), .date(grant.expiresAt),
                .digest(grant.currentRefreshToken), .digest(grant.session), .date(grant.revocation?.revokedAt),
                .text(grant.revocation?.reason.rawValue),
            ] + Self.tokenParameters(of: issuance) + [.date(issuance.authenticatedAt)]
        let statement = statements.createGrant
        let outcome = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            switch try Self.single(try connection.execute(statement, parameters)).int2(0) {
            case 0: return GrantCreation.created
            case 1: return GrantCreation.accountRevoked
            default: throw PostgresError(.unexpectedResult, message: "create_grant: an unknown outcome")
            }
        }
        remembered.created(issuance, outcome: outcome)
        return outcome
    }

    public func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try await lookUpRefreshToken(digest)
    }

    /// The refresh token and its grant as this store's redemption, grant creation or rotation wrote them,
    /// until its rotation here; no round trip.
    public func rememberedRefreshToken(_ digest: SecretDigest) -> RefreshTokenLookup? {
        remembered.refreshToken(digest)
    }

    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        let parameters = Self.rotationParameters(presented, current, successor, accessToken, now)
        let statement = statements.rotateRefreshToken
        let outcome = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            try Self.single(try connection.execute(statement, parameters)).int2(0)
        }
        remembered.rotation(of: presented, replacing: current, to: successor, session: nil, rotated: outcome == 0)
        return try await rotation(outcome, of: presented, from: statement)
    }

    /// Rotates and starts the session in one transaction and one round trip (the function
    /// `rotate_refresh_token_starting_session`, migration 6): never `nil`.
    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        let parameters =
            Self.rotationParameters(presented, current, successor, accessToken, now) + [
                .digest(session.digest), .grant(session.grant), .date(session.startedAt), .date(session.expiresAt),
            ]
        let statement = statements.rotateRefreshTokenStartingSession
        let outcome = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            try Self.single(try connection.execute(statement, parameters)).int2(0)
        }
        remembered.rotation(
            of: presented,
            replacing: current,
            to: successor,
            session: session.digest,
            rotated: outcome == 0
        )
        return try await rotation(outcome, of: presented, from: statement)
    }

    /// The parameters of `rotate_refresh_token`, which the rotation starting a session begins with.
    private static func rotationParameters(
        _ presented: SecretDigest,
        _ current: SecretDigest,
        _ successor: RefreshToken,
        _ accessToken: AccessToken,
        _ now: Date
    ) -> [PostgresValue] {
        [
            .digest(presented), .digest(current), .date(now),
            .digest(successor.digest), .grant(successor.grant), .date(successor.issuedAt), .date(successor.expiresAt),
            .digest(accessToken.digest), .grant(accessToken.grant), .date(accessToken.issuedAt),
            .date(accessToken.expiresAt),
        ]
    }

    /// Runs a later pool operation of a call whose first one reached the server: its failure says nothing
    /// of the call as ``PostgresError/backendWasUnavailable`` means it — something of the call was sent.
    private func afterSending<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch var error as PostgresError {
            error.backendWasUnavailable = false
            throw error
        }
    }

    /// The outcome of a rotation function: 0 rotated, 1 no such token, 2 grant not live, 3 superseded.
    private func rotation(
        _ outcome: Int16,
        of presented: SecretDigest,
        from statement: PostgresStatement
    ) async throws -> RefreshRotation {
        switch outcome {
        case 0:
            return .rotated
        case 1:
            return .notFound
        case 2:
            return .grantNotLive
        case 3:
            // The token and grant as they stand now, for the engine to tell a reuse from a lost race.
            guard let lookup = try await afterSending({ try await lookUpRefreshToken(presented) }) else {
                return .notFound
            }
            return .superseded(current: lookup)
        default:
            throw PostgresError(.unexpectedResult, message: "\(statement.name): an unknown outcome")
        }
    }

    public func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws -> SessionReplacement {
        let parameters: [PostgresValue] = [
            .grant(grant), .date(now), .digest(session.digest), .grant(session.grant), .date(session.startedAt),
            .date(session.expiresAt),
        ]
        let statement = statements.replaceSession
        return try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            let row = try Self.single(try connection.execute(statement, parameters))
            switch try row.int2(0) {
            case 0: return .replaced(previous: try row.optionalDigest(1))
            case 1: return .grantNotLive
            default: throw PostgresError(.unexpectedResult, message: "replace_session: an unknown outcome")
            }
        }
    }

    public func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        let revoke = statements.revokeGrant
        let revoked = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            let result = try connection.execute(revoke, [.grant(id), .date(now), .text(reason.rawValue)])
            return result.rowCount == 0 ? nil : try result.row(0).grant()
        }
        if let revoked {
            return .revoked(revoked)
        }
        // Nothing was written; say why, from the grant as it stands.
        guard let grant = try await afterSending({ try await self.grant(id) }), now < grant.expiresAt else {
            return .notFound
        }
        return grant.revocation == nil ? .notFound : .alreadyRevoked(grant)
    }

    public func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        let statement = statements.revokeGrants
        let revoked = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) in
            try connection.execute(statement, [.text(account.rawValue), .date(now), .text(reason.rawValue)]).rows.map {
                row throws(PostgresError) in try row.grant()
            }
        }
        // `grants(of:)`'s order, `ORDER BY created_at, id`, which is the in-memory store's.
        return revoked.sorted(by: Grant.isOlder)
    }

    public func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        try await lookUp(digest, with: statements.accessToken) { row, grant throws(PostgresError) in
            AccessTokenLookup(
                token: AccessToken(
                    digest: try row.digest(10),
                    grant: grant.id,
                    issuedAt: try row.date(11),
                    expiresAt: try row.date(12)
                ),
                grant: grant
            )
        }
    }

    public func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        try await lookUp(digest, with: statements.session) { row, grant throws(PostgresError) in
            SessionLookup(
                session: StudioSession(
                    digest: try row.digest(10),
                    grant: grant.id,
                    startedAt: try row.date(11),
                    expiresAt: try row.date(12)
                ),
                grant: grant
            )
        }
    }

    public func grant(_ id: GrantID) async throws -> Grant? {
        let statement = statements.grant
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            let result = try connection.execute(statement, [.grant(id)])
            return result.rowCount == 0 ? nil : try result.row(0).grant()
        }
    }

    public func grants(of account: AccountID) async throws -> [Grant] {
        let statement = statements.grantsOfAccount
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(statement, [.text(account.rawValue)]).rows.map { row throws(PostgresError) in
                try row.grant()
            }
        }
    }

    // MARK: Inspection, for conformance runs

    /// The store's tables, every one whose rows a conformance run compares.
    private static let tables = [
        "codes", "grants", "refresh_tokens", "access_tokens", "sessions", "rate_limits", "account_revocations",
    ]

    /// Every row of the store's tables as text (the table's name and the row as JSON), sorted: equal
    /// lists mean equal contents. For conformance runs, which check that a refused request changed
    /// nothing and that no secret is stored in the clear; not for production code.
    @_spi(Testing) public func dumpRecords() async throws -> [String] {
        let schema = configuration.quotedSchema
        let union = Self.tables.map { table in
            "SELECT '\(table) ' || row_to_json(t)::text FROM \(schema).\(table) t"
        }.joined(separator: " UNION ALL ")
        let statement = PostgresStatement(name: "tilecast_dump_records", sql: "SELECT * FROM (\(union)) r ORDER BY 1")
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(statement, []).rows.map { row throws(PostgresError) in try row.text(0) }
        }
    }

    /// Deletes every row of the store's tables, in one transaction. For conformance runs, whose every
    /// world starts empty; never call it on data you keep.
    @_spi(Testing) public func deleteAllRecords() async throws {
        let schema = configuration.quotedSchema
        let tables = Self.tables.map { "\(schema).\($0)" }.joined(separator: ", ")
        try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(script: "TRUNCATE \(tables)")
        }
    }

    /// Deletes what expired before `now`, in one transaction exempt from
    /// ``PostgresConfiguration/statementTimeout``: a backlog left by a long pause must still go. One
    /// instance prunes at a time: while another's call is under way this one returns 0 at once, removing
    /// nothing, and counts the skip in ``statistics`` (``PostgresStatistics/expiredRemovalsSkipped``).
    public func removeExpired(at now: Date) async throws -> Int {
        let statement = statements.removeExpired
        let skipped = expiredRemovalsSkipped
        return try await pool.withConnection(idempotent: true, maintenance: true) { connection throws(PostgresError) in
            try connection.execute(script: "BEGIN; SET LOCAL statement_timeout = 0")
            do throws(PostgresError) {
                let row = try Self.single(try connection.execute(statement, [.date(now)]))
                // NULL: another instance is pruning; what it skips goes on a later call.
                let removed = row.isNull(0) ? nil : Int(try row.int8(0))
                try connection.execute(script: "COMMIT")
                if removed == nil {
                    skipped.withLock { $0 += 1 }
                }
                return removed ?? 0
            } catch {
                try? connection.execute(script: "ROLLBACK")
                throw error
            }
        }
    }

    // MARK: Helpers

    private func lookUpRefreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try await lookUp(digest, with: statements.refreshToken) { row, grant throws(PostgresError) in
            RefreshTokenLookup(token: try row.refreshToken(at: 10, grant: grant.id), grant: grant)
        }
    }

    /// A secret's row joined with its grant — the grant's columns first — made into a lookup by `make`;
    /// `nil` when no row has the digest.
    private func lookUp<Lookup: Sendable>(
        _ digest: SecretDigest,
        with statement: PostgresStatement,
        _ make: @escaping @Sendable (PostgresRow, Grant) throws(PostgresError) -> Lookup
    ) async throws -> Lookup? {
        try await pool.withConnection(idempotent: true) { connection throws(PostgresError) -> Lookup? in
            let result = try connection.execute(statement, [.digest(digest)])
            guard result.rowCount > 0 else { return nil }
            let row = result.row(0)
            return try make(row, try row.grant())
        }
    }

    /// The access token, refresh token and session of `issuance` as they are written: each with its
    /// grant, the refresh token with its state (0 active, 1 rotated, 2 retired, its time and successor).
    private static func tokenParameters(of issuance: GrantIssuance) -> [PostgresValue] {
        let access = issuance.accessToken
        let refresh = issuance.refreshToken
        let session = issuance.session
        var state: (code: Int16, changedAt: Date?, successor: SecretDigest?) = (0, nil, nil)
        switch refresh?.state {
        case .rotated(let rotatedAt, let successor): state = (1, rotatedAt, successor)
        case .retired(let retiredAt): state = (2, retiredAt, nil)
        case .active, nil: break
        }
        return [
            .digest(access?.digest), access.map { .grant($0.grant) } ?? .null(.uuid), .date(access?.issuedAt),
            .date(access?.expiresAt),
            .digest(refresh?.digest), refresh.map { .grant($0.grant) } ?? .null(.uuid), .date(refresh?.issuedAt),
            .date(refresh?.expiresAt), .int2(state.code), .date(state.changedAt), .digest(state.successor),
            .digest(session?.digest), session.map { .grant($0.grant) } ?? .null(.uuid), .date(session?.startedAt),
            .date(session?.expiresAt),
        ]
    }

    private static func single(_ result: PostgresResult) throws(PostgresError) -> PostgresRow {
        guard result.rowCount == 1 else {
            throw PostgresError(.unexpectedResult, message: "expected one row, got \(result.rowCount)")
        }
        return result.row(0)
    }
}
#endif
