// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuth

@testable import TilecastAuthPostgres

/// A latch on the server: a statement made with ``holdingScript(after:)`` keeps its connection, and any
/// lock it took first, until the test opens the latch, however slowly the machine runs.
///
/// It replaces a fixed `pg_sleep`, for which each test had to guess how long its hold must last. On a
/// loaded machine (ThreadSanitizer in CI, with the other suites on both cores) a test's own steps
/// outlasted the guesses: a watcher missed a 1.5 s sleep altogether, and callers that had given up on their
/// own were measured at 1.6–1.9 s against the 1.5 s bound meant to tell them from callers that waited for a
/// 4 s sleep to end. With a latch, "before the connection came free" is an order the test makes, not a
/// race with a clock: the test opens the latch only once it has seen what it checks.
///
/// A holding statement also ends by itself after ``longestHold``, so that a test that fails before opening
/// its latch leaves no session behind; a store that holds through a latch needs a `statementTimeout` above
/// that, or the server cancels the hold first.
struct PostgresLatch {
    /// How long a holding statement waits for the latch at most.
    static let longestHold: Duration = .seconds(20)
    /// A `statementTimeout` for stores that hold through a latch: above ``longestHold``.
    static let holdingStatementTimeout: Duration = .seconds(30)

    /// A store of the latch's own, which owns its table and watches the server's sessions.
    let watcher: PostgresGrantStore
    private let table: String

    /// A closed latch, in a schema of its own that every role may read (the limited roles of the
    /// connection-limit tests hold through it too).
    static func make() async throws -> PostgresLatch {
        let watcher = try await PostgresTestDatabase.makeStore(clients: [], schema: PostgresTestDatabase.uniqueSchema())
        let schema = watcher.configuration.quotedSchema
        let table = "\(schema).latch"
        try await watcher.execute(
            script: """
                CREATE TABLE \(table) (open boolean NOT NULL); INSERT INTO \(table) VALUES (false);
                GRANT USAGE ON SCHEMA \(schema) TO PUBLIC; GRANT SELECT ON \(table) TO PUBLIC
                """
        )
        return PostgresLatch(watcher: watcher, table: table)
    }

    /// A statement that runs `first` (a lock, say) and then waits, in `pg_sleep`s of 5 ms, until the latch
    /// is open or ``longestHold`` has passed. Each check reads the latch afresh: in a `DO` block under
    /// READ COMMITTED every statement takes a new snapshot.
    func holdingScript(after first: String? = nil) -> String {
        let seconds = Self.longestHold.components.seconds
        return """
            DO $$ BEGIN \(first.map { "\($0); " } ?? "")\
            WHILE NOT (SELECT open FROM \(table)) \
            AND clock_timestamp() < statement_timestamp() + interval '\(seconds) seconds' LOOP \
            PERFORM pg_sleep(0.005); END LOOP; END $$
            """
    }

    /// Returns once `count` sessions of the store on `schema` are inside a holding statement's wait —
    /// past its `first` step — or records an issue after 20 s.
    func waitUntilHeld(schema: String, count: Int = 1) async throws {
        try await watcher.waitUntilSleeping(schema: schema, count: count)
    }

    /// Opens the latch: every holding statement ends within a few milliseconds.
    func open() async throws {
        try await watcher.execute(script: "UPDATE \(table) SET open = true")
    }

    /// Runs `body` with the latch closed and opens it afterwards, also when `body` throws.
    func whileClosed<Value>(_ body: () async throws -> Value) async throws -> Value {
        let result: Value
        do {
            result = try await body()
        } catch {
            try? await open()
            throw error
        }
        try await open()
        return result
    }

    /// Opens the latch, if the test has not — a test that threw before ``whileClosed(_:)`` would
    /// otherwise leave its holds, and their locks, for up to ``longestHold`` — and then closes the
    /// watcher, in a task of its own: for a `defer`.
    func close() {
        Task {
            try? await open()
            watcher.close()
        }
    }
}
#endif
