// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Synchronization
import Testing
import TilecastAuth

@testable import TilecastAuthPostgres

/// The schemas and roles one PostgreSQL test made, which ``PostgresServerGate`` drops once the test has
/// ended, passed or failed.
///
/// The tests run against whatever database `TILECAST_DATABASE_URL` names — a developer's own as well as
/// the CI's throwaway cluster — so nothing they make may outlive them: a schema per store (a full run
/// makes over a hundred), and the limited roles of the connection-limit tests, which belong to the
/// whole cluster. ``PostgresTestDatabase/uniqueSchema()`` and ``PostgresTestDatabase/uniqueRole()``
/// record each name here, in the test's task (and its child tasks) through ``current``.
final class PostgresTestLeftovers: Sendable {
    @TaskLocal static var current: PostgresTestLeftovers?

    private let names = Mutex<(schemas: [String], roles: [String])>(([], []))

    func recordSchema(_ name: String) {
        names.withLock { $0.schemas.append(name) }
    }

    func recordRole(_ name: String) {
        names.withLock { $0.roles.append(name) }
    }

    /// The statements that remove everything recorded: the schemas with all they hold, then each role
    /// with its privileges in this database. Waits for a lock at most `lockTimeout`: a test's backend
    /// still holding through a latch (PostgresLatch, opened when the test ends, passed or failed) lets go
    /// within milliseconds of the test's end, and at most 20 s after it began; a lock held longer than that
    /// fails the cleanup, and so the test, rather than hanging the run.
    func removal(lockTimeout: Duration) -> String? {
        let (schemas, roles) = names.withLock { $0 }
        guard !schemas.isEmpty || !roles.isEmpty else { return nil }
        var script = "SET lock_timeout = '\(lockTimeout.components.seconds)s';"
        if !schemas.isEmpty {
            script += " DROP SCHEMA IF EXISTS \(schemas.joined(separator: ", ")) CASCADE;"
        }
        for role in roles {
            // DROP OWNED needs the role to exist; the test may have ended before creating it.
            script += """
                 DO $$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = '\(role)') THEN \
                EXECUTE 'DROP OWNED BY \(role)'; EXECUTE 'DROP ROLE \(role)'; END IF; END $$;
                """
        }
        return script + " RESET lock_timeout"
    }
}

extension PostgresTestDatabase {
    /// A schema name no other test uses, so tests run in parallel against one database; dropped once
    /// the test has ended.
    static func uniqueSchema() -> String {
        let name = "tilecast_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        PostgresTestLeftovers.current?.recordSchema(name)
        return name
    }

    /// A role name no other test uses; the role, if the test creates it, is dropped once the test has
    /// ended.
    static func uniqueRole() -> String {
        let name = "tilecast_limited_" + UUID().uuidString.prefix(8).lowercased()
        PostgresTestLeftovers.current?.recordRole(name)
        return name
    }

    /// Whether the tests connect as `postgres` through a URL with a `user=postgres` parameter, as
    /// `.ci/with-postgres` makes it: then they may create roles, and log in as them without a password.
    static var allowsLimitedRoles: Bool { url?.contains("user=postgres") == true }

    /// The database URL with `role` in place of `postgres` (``allowsLimitedRoles``).
    static func url(as role: String) throws -> String {
        let url = try #require(url)
        try #require(allowsLimitedRoles)
        return url.replacingOccurrences(of: "user=postgres", with: "user=\(role)")
    }

    /// SQL that lets `role` create its schema in the database the tests run against, whatever its name.
    static func grantCreate(to role: String) -> String {
        "DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO \(role)', current_database()); END $$"
    }
}

extension Trait where Self == ConditionTrait {
    /// For the tests that log in as a role of their own with a connection limit: they need a URL that
    /// connects as `postgres` with a `user=postgres` parameter on a server that trusts local logins, as
    /// `.ci/with-postgres` starts. Elsewhere they are reported skipped, never passed without running.
    static var limitedRoles: Self {
        .enabled(
            if: PostgresTestDatabase.allowsLimitedRoles,
            "needs TILECAST_DATABASE_URL with user=postgres on a server that trusts local logins (bash .ci/with-postgres)"
        )
    }
}
#endif
