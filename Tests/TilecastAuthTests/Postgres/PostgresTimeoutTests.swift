// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Synchronization
import Testing
import TilecastAuth
import TilecastAuthTesting

@testable import TilecastAuthPostgres

/// The store's two limits on waiting: for a connection of its pool, and for a statement on the server.
/// A database that hangs or a lock held elsewhere must shed requests as 503s, never queue them without
/// end, and never leave anything changed.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresTimeoutTests {
    static let clients = PostgresConcurrencyTests.clients
    static let account = PostgresConcurrencyTests.account
    static let unknownGrant = GrantID(rawValue: UUID())

    /// A migrated store in a fresh schema — or on `schema` — with the given limits.
    static func makeStore(
        schema: String = PostgresTestDatabase.uniqueSchema(),
        maximumConnections: Int = 10,
        connectionWaitTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(5),
        operationTimeout: Duration? = nil
    ) async throws -> PostgresGrantStore {
        let store = PostgresGrantStore(
            clients: clients,
            configuration: try PostgresConfiguration(
                databaseURL: PostgresTestDatabase.url ?? "",
                schema: schema,
                maximumConnections: maximumConnections,
                connectionWaitTimeout: connectionWaitTimeout,
                statementTimeout: statementTimeout,
                operationTimeout: operationTimeout
            )
        )
        try await store.migrate()
        return store
    }

    /// Occupies one of `store`'s connections until `latch` opens, in a task of its own; returns once the
    /// server runs the hold, so that the connection is surely taken. `store` needs a statement timeout
    /// above the latch's longest hold.
    static func occupyConnection(
        of store: PostgresGrantStore,
        until latch: PostgresLatch
    ) async throws -> Task<Void, any Error> {
        let holder = Task { try await store.execute(script: latch.holdingScript()) }
        try await latch.waitUntilHeld(schema: store.configuration.schema)
        return holder
    }

    /// Locks every code row of `store`'s schema from another session until `latch` opens — or, with
    /// `table`, the whole table against writers, as an administrator's `LOCK TABLE` or a migration does —
    /// in a task of its own; returns once the lock is held.
    static func lockCodes(
        of store: PostgresGrantStore,
        until latch: PostgresLatch,
        table: Bool = false
    ) async throws -> Task<Void, any Error> {
        let locker = try await makeStore(
            schema: store.configuration.schema,
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        let schema = store.configuration.quotedSchema
        let lock =
            table ? "LOCK TABLE \(schema).codes IN EXCLUSIVE MODE" : "PERFORM 1 FROM \(schema).codes FOR UPDATE"
        let holder = Task {
            defer { locker.close() }
            try await locker.execute(script: latch.holdingScript(after: lock))
        }
        // The hold's wait comes after the lock in one statement: seen waiting, the lock is held.
        try await latch.waitUntilHeld(schema: locker.configuration.schema)
        return holder
    }

    @Test("A caller kept waiting past connectionWaitTimeout gets poolTimeout — a 503 — and the pool recovers")
    func connectionWaitIsBounded() async throws {
        let store = try await Self.makeStore(
            maximumConnections: 1,
            connectionWaitTimeout: .milliseconds(200),
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holder = try await Self.occupyConnection(of: store, until: latch)

        try await latch.whileClosed {
            // The connection comes back only once the latch opens, after these checks: each caller gave up
            // on its own, within its 200 ms give or take a loaded machine's delays.
            let started = ContinuousClock.now
            let error = await #expect(throws: PostgresError.self) { _ = try await store.grant(Self.unknownGrant) }
            #expect(error?.kind == .poolTimeout)
            #expect(error?.backendWasUnavailable == true, "nothing was sent, and nothing else could be")
            #expect(ContinuousClock.now - started < .seconds(5))

            let engine = try AuthEngine(store: store, accounts: InMemoryAccountDirectory(activeAccounts: []))
            let response = await engine.handle(request: PostgresTestDatabase.unknownRefreshTokenRequest)
            #expect(response.status == 503, "\(String(decoding: response.body, as: UTF8.self))")
        }

        // The timed-out waiters took no slot with them: once the holder is done, the one connection
        // serves caller after caller without a wait (a leaked slot would time every one of them out).
        try await holder.value
        for _ in 0..<4 {
            #expect(try await store.grant(Self.unknownGrant) == nil)
        }
        #expect(store.statistics.connectionsOpened == 1)
    }

    @Test("A caller whose task is cancelled stops waiting for a connection at once")
    func cancelledWaitEnds() async throws {
        let store = try await Self.makeStore(
            maximumConnections: 1,
            connectionWaitTimeout: .seconds(60),
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holder = try await Self.occupyConnection(of: store, until: latch)

        try await latch.whileClosed {
            // The connection is held until after the waiter has ended: only its cancellation ended it.
            let waiter = Task { try await store.grant(Self.unknownGrant) }
            try await Task.sleep(for: .milliseconds(100))
            let cancelled = ContinuousClock.now
            waiter.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiter.value }
            #expect(ContinuousClock.now - cancelled < .seconds(5))
        }

        try await holder.value
        #expect(try await store.grant(Self.unknownGrant) == nil)
    }

    @Test("A redemption blocked past statementTimeout by a lock held elsewhere is cancelled; the code stays redeemable")
    func statementWaitIsBounded() async throws {
        let store = try await Self.makeStore(statementTimeout: .milliseconds(300))
        let now = Date()
        let code = try await PostgresTestDatabase.insertCode(into: store, account: Self.account, at: now)
        let issuance = PostgresTestDatabase.bareIssuance(account: Self.account, at: now)

        // Another session locks the code's row and keeps it until the latch opens, after the redemption.
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holder = try await Self.lockCodes(of: store, until: latch)

        try await latch.whileClosed {
            let started = ContinuousClock.now
            let error = await #expect(throws: PostgresError.self) {
                _ = try await store.redeemCode(code.digest, issuing: issuance, at: now)
            }
            #expect(error?.sqlState == "57014")
            #expect(ContinuousClock.now - started < .seconds(5))
        }

        // Cancelled means rolled back: the code is as it was, and redeems once the lock is gone.
        try await holder.value
        #expect(try await store.authorizationCode(code.digest)?.redemption == nil)
        #expect(try await store.grants(of: Self.account).isEmpty)
        #expect(try await store.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)
    }

    @Test("Operations blocked on the server do not hold dispatch's global threads: timers still fire")
    func blockedOperationsDoNotStarveDispatch() async throws {
        let store = try await Self.makeStore(
            maximumConnections: 8,
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holders = (0..<8).map { _ in Task { try await store.execute(script: latch.holdingScript()) } }
        try await latch.waitUntilHeld(schema: store.configuration.schema, count: 8)

        // Eight blocked libpq calls — four times the cores of the CI machine — and a 50 ms dispatch timer
        // fires while they are blocked: on dispatch's threads the calls would hold them all until the
        // server answered, which it does only once the latch opens, after the timer.
        try await latch.whileClosed {
            let scheduled = ContinuousClock.now
            let fired = await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                    continuation.resume(returning: ContinuousClock.now)
                }
            }
            #expect(fired - scheduled < .seconds(5))
        }
        for holder in holders {
            try await holder.value
        }
    }

    /// A row a request holds, `removeExpired` skips (`PostgresOperationsTests.removalSkipsLockedRows`);
    /// a table locked against writers it waits out, as it waits out a long delete.
    @Test("removeExpired is exempt from statementTimeout: it waits out a table lock a request may not")
    func pruningIsExempt() async throws {
        let store = try await Self.makeStore(statementTimeout: .milliseconds(300))
        let now = Date()
        _ = try await PostgresTestDatabase.insertCode(into: store, account: Self.account, at: now)
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holder = try await Self.lockCodes(of: store, until: latch, table: true)

        let removal = Task { try await store.removeExpired(at: now.addingTimeInterval(120)) }
        try await latch.whileClosed {
            // Seen waiting for the table, and still waiting three statement timeouts later.
            let schema = store.configuration.schema
            try await latch.watcher.waitUntilWaitingForALock(schema: schema)
            try await Task.sleep(for: .milliseconds(900))
            #expect(try await latch.watcher.sessionsWaitingForALock(schema: schema) == 1)
        }
        // Once the lock is gone, pruning goes on and removes the code.
        #expect(try await removal.value == 1)
        try await holder.value
    }

    @Test(
        "A server that refuses connections: callers wait out connectionWaitTimeout, and the pool retries with backoff, not once per caller"
    )
    func refusedConnectsBackOff() async throws {
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(
                databaseURL: "postgresql:///none?host=/nonexistent-tilecast-socket-dir",
                schema: "tilecast",
                maximumConnections: 10,
                connectionWaitTimeout: .seconds(1)
            )
        )
        defer { store.close() }
        let started = ContinuousClock.now
        let failures = await withTaskGroup(of: PostgresError?.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    do {
                        _ = try await store.grant(Self.unknownGrant)
                        return nil
                    } catch {
                        return error as? PostgresError
                    }
                }
            }
            return await group.reduce(into: [PostgresError]()) { if let error = $1 { $0.append(error) } }
        }
        let elapsed = ContinuousClock.now - started
        #expect(failures.count == 100)
        // Waiting for a connect or in line, each found the server unavailable, having sent nothing.
        #expect(failures.allSatisfy { $0.backendWasUnavailable && [.connection, .poolTimeout].contains($0.kind) })
        // Ten at a time (the pool's size), each waiting up to a second: about ten seconds in all, bounded.
        #expect(elapsed < .seconds(15), "took \(elapsed)")
        // One caller at a time tries, 25 ms doubling to 2 s: a few attempts a second, not one per caller.
        let refused = store.statistics.connectionsRefused
        #expect(refused >= 3 && refused <= 40, "\(refused) connection attempts for 100 callers")
    }

    @Test(
        "An operation of which anything was sent never says the backend was unavailable: a lost write, a read retried on a closed store",
        arguments: [false, true]
    )
    func sentOperationIsNoUnavailability(retriedRead: Bool) async throws {
        let store = try await Self.makeStore()
        defer { store.close() }
        // The session ends itself while running the statement, as a crash or an administrator would: the
        // statement was sent, and a write's commit could have been. A write fails there; a read is retried,
        // and its retry finds the store closed before it could send anything — after its first attempt had.
        let statement = PostgresStatement(
            name: "test_terminate_self",
            sql: "SELECT pg_terminate_backend(pg_backend_pid())"
        )
        let error = await #expect(throws: PostgresError.self) {
            try await store.pool.withConnection(idempotent: retriedRead) { connection throws(PostgresError) in
                if retriedRead { store.close() }
                _ = try connection.execute(statement, [])
            }
        }
        #expect(error?.kind == (retriedRead ? .closed : .connection), "\(String(describing: error))")
        #expect(error?.backendWasUnavailable == false)
    }

    @Test(
        "Too many connections (SQLSTATE 53300): callers wait for a connection the pool already has, and all succeed",
        .limitedRoles
    )
    func tooManyConnectionsWaitForAReleasedOne() async throws {
        let role = PostgresTestDatabase.uniqueRole()
        let admin = try await PostgresTestDatabase.makeStore(clients: [], schema: PostgresTestDatabase.uniqueSchema())
        defer { admin.close() }
        try await admin.execute(
            script: "CREATE ROLE \(role) LOGIN CONNECTION LIMIT 2; " + PostgresTestDatabase.grantCreate(to: role)
        )
        let limitedURL = try PostgresTestDatabase.url(as: role)
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(
                databaseURL: limitedURL,
                schema: PostgresTestDatabase.uniqueSchema(),
                maximumConnections: 8,
                // The wait's bound is another test's subject; here it only has to outlast a slow machine
                // (under ThreadSanitizer in CI one caller of forty once waited past 5 s), so a failure
                // below is the limit's refusal reaching a caller, not the machine's speed.
                connectionWaitTimeout: .seconds(60)
            )
        )
        try await store.migrate()
        // Each caller holds its connection for 50 ms, so the callers overlap however slowly a loaded
        // machine starts them, and the pool must try past the role's two (a lookup each let a busy test
        // run finish them on two connections without ever meeting the limit).
        let failures = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    do {
                        try await store.execute(script: "SELECT pg_sleep(0.05)")
                        return try await store.grant(Self.unknownGrant) == nil ? nil : "a grant was found"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        store.close()
        #expect(failures.isEmpty, "\(failures.count) of 40 failed: \(failures.prefix(3))")
        #expect(store.statistics.connectionsOpened <= 2)
        #expect(store.statistics.connectionsRefused >= 1, "the role's limit was never met")
        try await admin.execute(script: "DROP OWNED BY \(role); DROP ROLE IF EXISTS \(role)")
    }

    /// A store whose role may open only `limit` connections, and a cleanup for the role.
    static func limitedStore(
        limit: Int,
        maximumConnections: Int,
        connectionWaitTimeout: Duration,
        statementTimeout: Duration = .seconds(5),
        operationTimeout: Duration? = nil
    ) async throws -> (PostgresGrantStore, cleanup: () async throws -> Void) {
        let role = PostgresTestDatabase.uniqueRole()
        let admin = try await PostgresTestDatabase.makeStore(clients: [], schema: PostgresTestDatabase.uniqueSchema())
        try await admin.execute(
            script: "CREATE ROLE \(role) LOGIN CONNECTION LIMIT \(limit); " + PostgresTestDatabase.grantCreate(to: role)
        )
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(
                databaseURL: try PostgresTestDatabase.url(as: role),
                schema: PostgresTestDatabase.uniqueSchema(),
                maximumConnections: maximumConnections,
                connectionWaitTimeout: connectionWaitTimeout,
                statementTimeout: statementTimeout,
                operationTimeout: operationTimeout
            )
        )
        try await store.migrate()
        return (
            store,
            {
                store.close()
                try await admin.execute(script: "DROP OWNED BY \(role); DROP ROLE IF EXISTS \(role)")
                admin.close()
            }
        )
    }

    @Test(
        "With the server's limit below the pool's, every caller is served: none starves waiting for a connect",
        .limitedRoles
    )
    func noCallerStarvesBehindRefusedConnects() async throws {
        let (store, cleanup) = try await Self.limitedStore(
            limit: 2,
            maximumConnections: 6,
            connectionWaitTimeout: .seconds(2)
        )
        let until = ContinuousClock.now.advanced(by: .seconds(4))
        let callers = await withTaskGroup(of: (served: Int, failed: Int).self) { group in
            for _ in 0..<12 {
                group.addTask {
                    var counts = (0, 0)
                    while ContinuousClock.now < until {
                        do {
                            _ = try await store.grant(Self.unknownGrant)
                            counts.0 += 1
                        } catch {
                            counts.1 += 1
                        }
                    }
                    return counts
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        try await cleanup()
        let served = callers.map(\.served).reduce(0, +)
        let failed = callers.map(\.failed).reduce(0, +)
        // Every caller got through, however slow the machine (under ThreadSanitizer in CI, 30 operations
        // in the 4 s, where a count over 100 had been required), and none gave up waiting.
        #expect(callers.allSatisfy { $0.served > 0 }, "\(callers.map(\.served))")
        #expect(failed == 0, "\(failed) waits for a connection failed while \(served) operations were served")
    }

    @Test("An operation's deadline starts once it has a connection: a long wait for one is no timeout", .limitedRoles)
    func deadlineStartsWithTheConnection() async throws {
        let (store, cleanup) = try await Self.limitedStore(
            limit: 1,
            maximumConnections: 2,
            connectionWaitTimeout: .seconds(30),
            statementTimeout: PostgresLatch.holdingStatementTimeout,
            operationTimeout: .milliseconds(500)
        )
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        // The only connection the server allows is held (as maintenance, which no deadline cuts short)
        // until the caller has been refused a second one and has waited two deadlines for the first.
        let holder = Task {
            try await store.pool.withConnection(idempotent: false, maintenance: true) {
                connection throws(PostgresError) in
                try connection.execute(script: latch.holdingScript())
            }
        }
        try await latch.waitUntilHeld(schema: store.configuration.schema)
        let refusedBefore = store.statistics.connectionsRefused
        let callerEnded = Mutex(false)
        let caller = Task {
            defer { callerEnded.withLock { $0 = true } }
            return try await store.grant(Self.unknownGrant)
        }
        try await latch.whileClosed {
            let deadline = ContinuousClock.now + .seconds(20)
            while store.statistics.connectionsRefused == refusedBefore && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(store.statistics.connectionsRefused > refusedBefore, "the caller never tried for a connection")
            try await Task.sleep(for: .seconds(1))
            // Refused a connection of its own more than two deadlines ago, and still waiting for the held one.
            #expect(!callerEnded.withLock { $0 }, "the caller did not wait for the connection")
        }
        // Served once the connection came free: the deadline had not run while it waited.
        #expect(try await caller.value == nil)
        try await holder.value
        try await cleanup()
    }

    @Test(
        "A frozen backend (SIGSTOP) costs an operation its operationTimeout, not the server's silence — handed off or on the store's executor",
        arguments: [false, true]
    )
    func frozenBackendIsBoundedOnTheClient(onExecutor: Bool) async throws {
        // The server's statement_timeout cannot help: a stopped backend enforces nothing.
        let store = try await Self.makeStore(statementTimeout: .seconds(60), operationTimeout: .milliseconds(800))
        defer { store.close() }
        _ = try await store.grant(Self.unknownGrant)  // opens the connection the next call will use
        let admin = try await PostgresTestDatabase.makeStore(clients: [], schema: PostgresTestDatabase.uniqueSchema())
        defer { admin.close() }
        let pids = try await admin.backendPIDs(schema: store.configuration.schema)
        try #require(!pids.isEmpty)
        for pid in pids { kill(pid, SIGSTOP) }
        let started = ContinuousClock.now
        let outcome = await Task(executorPreference: onExecutor ? store.taskExecutor : nil) {
            () -> Result<Grant?, any Error> in
            do { return .success(try await store.grant(Self.unknownGrant)) } catch { return .failure(error) }
        }.value
        let waited = ContinuousClock.now - started
        for pid in pids { kill(pid, SIGCONT) }
        if case .failure(let error as PostgresError) = outcome {
            #expect(error.kind == .timeout, "\(error)")
            #expect(!error.backendWasUnavailable, "the statement was sent: whether it ran is unknown")
        } else {
            Issue.record("an operation on a frozen backend returned \(outcome)")
        }
        // On the executor the statement ran in place, on the request's own thread; off it, handed off.
        #expect(store.statistics.operationsInPlace == (onExecutor ? 1 : 0))
        // Far below the server's statement_timeout (60 s), so that it is the client's bound that ended the
        // wait, with room for a slow machine: under ThreadSanitizer in CI on 2026-12-02 the handed-off case
        // took 3.48 s, where the bound was then 3 s.
        #expect(waited >= .milliseconds(800) && waited < .seconds(10), "waited \(waited)")
        // The frozen connection is gone; the next operation opens a fresh one and succeeds.
        #expect(try await store.grant(Self.unknownGrant) == nil)
    }
}

extension PostgresGrantStore {
    /// The process ids of the server sessions of the store on `schema`.
    func backendPIDs(schema: String) async throws -> [pid_t] {
        let statement = PostgresStatement(
            name: "test_pids",
            sql: "SELECT pid FROM pg_stat_activity WHERE application_name = $1"
        )
        let name: PostgresValue = .text("tilecast-auth/\(schema)")
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            try connection.execute(statement, [name]).rows.map { row throws(PostgresError) in pid_t(try row.int4(0)) }
        }
    }

    /// Returns once `count` server sessions of the store on `schema` are inside `pg_sleep`, or records an
    /// issue after 20 s by the clock. (It was 500 polls 10 ms apart, "5 s", which under ThreadSanitizer on
    /// a loaded 2-core machine ran out before the sessions were seen sleeping: each poll is a query.)
    func waitUntilSleeping(schema: String, count: Int = 1) async throws {
        try await waitUntil(count, sessionsOf: schema, are: .sleeping)
    }

    /// Returns once `count` server sessions of the store on `schema` wait for a lock (a row's or a
    /// table's), or records an issue after 20 s.
    func waitUntilWaitingForALock(schema: String, count: Int = 1) async throws {
        try await waitUntil(count, sessionsOf: schema, are: .waitingForALock)
    }

    /// How many server sessions of the store on `schema` wait for a lock right now.
    func sessionsWaitingForALock(schema: String) async throws -> Int {
        try await sessions(of: schema, that: .waitingForALock)
    }

    /// What a server session is doing, as `pg_stat_activity` shows it.
    private enum SessionState {
        /// Inside `pg_sleep`: its wait event, so not while the statement still takes a lock before it.
        case sleeping
        /// Waiting for a lock, a row's or a table's.
        case waitingForALock

        var condition: String {
            switch self {
            case .sleeping: "wait_event = 'PgSleep'"
            case .waitingForALock: "wait_event_type = 'Lock'"
            }
        }
    }

    private func waitUntil(_ count: Int, sessionsOf schema: String, are state: SessionState) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if try await sessions(of: schema, that: state) >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(count) sessions of \(schema) were not all \(state) within 20 s")
    }

    /// How many server sessions of the store on `schema` are in `state` right now.
    private func sessions(of schema: String, that state: SessionState) async throws -> Int {
        let statement = PostgresStatement(
            name: "test_sessions_\(state)",
            sql: "SELECT count(*)::int4 FROM pg_stat_activity WHERE application_name = $1 AND \(state.condition)"
        )
        let name: PostgresValue = .text("tilecast-auth/\(schema)")
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            Int(try connection.execute(statement, [name]).row(0).int4(0))
        }
    }
}
#endif
