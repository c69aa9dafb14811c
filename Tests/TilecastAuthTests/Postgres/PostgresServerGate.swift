// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Testing
import TilecastAuth

@testable import TilecastAuthPostgres

extension Trait where Self == PostgresServerGate {
    /// Runs each PostgreSQL test alone, once the server has room for it: the tests fit a server started
    /// with PostgreSQL's defaults (`max_connections = 100`), and a server too small for them fails with a
    /// message that says so instead of `FATAL: sorry, too many clients already` somewhere in a race.
    static var postgresServer: Self { PostgresServerGate() }
}

/// The scope of every PostgreSQL test case: one at a time, each after the server has at least
/// ``connectionsPerTest`` connections free, and each followed by the removal of the schemas and roles it
/// made (``PostgresTestLeftovers``).
///
/// One at a time because the concurrency tests open five pools of ten each, and a few of them together
/// would exceed a default server; the whole PostgreSQL part of the suite still takes only seconds. The
/// free connections are awaited, not assumed, because a finished test's connections close as its stores
/// go away, and the server counts a backend until its process has exited.
struct PostgresServerGate: SuiteTrait, TestTrait, TestScoping {
    /// The most connections one PostgreSQL test opens at once: five instances of ten connections each,
    /// and the gate's own.
    static let connectionsPerTest = 52

    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    @concurrent func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @concurrent @Sendable () async throws -> Void
    ) async throws {
        let turns = PostgresServerTurns.shared
        await turns.take()
        let leftovers = PostgresTestLeftovers()
        let test: Result<Void, any Error>
        do {
            try await turns.awaitRoom(for: Self.connectionsPerTest)
            try await PostgresTestLeftovers.$current.withValue(leftovers) { try await function() }
            test = .success(())
        } catch {
            test = .failure(error)
        }
        let removal: Result<Void, any Error>
        do {
            try await turns.remove(leftovers)
            removal = .success(())
        } catch {
            removal = .failure(error)
        }
        await turns.give()
        // The test's own failure is the one reported; a removal that failed as well still fails the run
        // through the check in .ci/run that nothing is left behind.
        try test.get()
        try removal.get()
    }
}

/// The turns of the PostgreSQL tests, first come first served, and the connection that watches the
/// server's room.
actor PostgresServerTurns {
    static let shared = PostgresServerTurns()

    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var observer: PostgresGrantStore?

    /// Waits for the turn.
    func take() async {
        if !taken {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the turn to the next waiter, if any.
    func give() {
        if waiting.isEmpty {
            taken = false
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Returns once the server accepts `needed` more connections from an ordinary role; throws at once if
    /// it never could, and after 10 seconds if other clients keep it full.
    func awaitRoom(for needed: Int) async throws {
        let observer = try await observerStore()
        var room = try await observer.connectionRoom()
        guard room.limit >= needed + 1 else {
            throw PostgresServerTooSmall(needed: needed, room: room)
        }
        var polls = 0
        while room.free < needed && polls < 200 {
            try await Task.sleep(for: .milliseconds(50))
            room = try await observer.connectionRoom()
            polls += 1
        }
        guard room.free >= needed else { throw PostgresServerTooSmall(needed: needed, room: room) }
    }

    /// Drops what one test made (``PostgresTestLeftovers``).
    func remove(_ leftovers: PostgresTestLeftovers) async throws {
        guard let script = leftovers.removal(lockTimeout: .seconds(10)) else { return }
        try await observerStore().execute(script: script)
    }

    /// The gate's own store: one connection, and no schema of its own (it never migrates), so that it
    /// leaves nothing behind either.
    private func observerStore() async throws -> PostgresGrantStore {
        if let observer { return observer }
        let store = PostgresGrantStore(
            clients: [],
            configuration: try PostgresTestDatabase.configuration(schema: "tilecast_test_gate", maximumConnections: 1)
        )
        observer = store
        return store
    }
}

/// How many connections a server takes from an ordinary role, and how many of them are in use.
struct PostgresConnectionRoom: Sendable {
    /// `max_connections` less the slots reserved for superusers and for `pg_use_reserved_connections`.
    let limit: Int
    /// Client connections open now, the observer's own included.
    let used: Int
    let maxConnections: Int

    var free: Int { limit - used }
}

/// The server cannot give one PostgreSQL test the connections it opens.
struct PostgresServerTooSmall: Error, CustomStringConvertible {
    let needed: Int
    let room: PostgresConnectionRoom

    var description: String {
        room.limit < needed + 1
            ? """
            the PostgreSQL tests open up to \(needed) connections at once, and this server takes at most \
            \(room.limit) from an ordinary role (max_connections = \(room.maxConnections), less its reserved \
            slots): raise max_connections, or use `bash .ci/with-postgres`, which starts a server with \
            PostgreSQL's defaults
            """
            : """
            the PostgreSQL tests open up to \(needed) connections at once, and for 10 s this server had only \
            \(room.free) free (\(room.used) of \(room.limit) in use by other clients)
            """
    }
}

extension PostgresGrantStore {
    /// The server's connection limit for an ordinary role, and its connections in use.
    func connectionRoom() async throws -> PostgresConnectionRoom {
        let statement = PostgresStatement(
            name: "test_connection_room",
            sql: """
                SELECT current_setting('max_connections')::int4,
                       current_setting('superuser_reserved_connections')::int4
                           + coalesce(current_setting('reserved_connections', true), '0')::int4,
                       (SELECT count(*)::int4 FROM pg_stat_activity WHERE backend_type = 'client backend')
                """
        )
        return try await pool.withConnection(idempotent: true) { connection throws(PostgresError) in
            let row = try connection.execute(statement, []).row(0)
            let maxConnections = Int(try row.int4(0))
            return PostgresConnectionRoom(
                limit: maxConnections - Int(try row.int4(1)),
                used: Int(try row.int4(2)),
                maxConnections: maxConnections
            )
        }
    }
}
#endif
