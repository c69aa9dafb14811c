// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

/// The PostgreSQL server the PostgreSQL tests run against: `TILECAST_DATABASE_URL`, a libpq connection
/// string or URI. The tests are built only with the package trait PostgreSQL (`swift test --traits
/// PostgreSQL`); without the variable they report themselves skipped. `.ci/with-postgres` starts a
/// throwaway cluster and sets it; `.ci/run` also sets `TILECAST_REQUIRE_DATABASE=1`, under which a build
/// without the trait, or a run without a database, fails instead.
enum PostgresTestDatabase {
    static let url = ProcessInfo.processInfo.environment["TILECAST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isRequired = ProcessInfo.processInfo.environment["TILECAST_REQUIRE_DATABASE"] == "1"
    static var isAvailable: Bool { url != nil }
    static let skipMessage: Comment =
        "TILECAST_DATABASE_URL is not set: the PostgreSQL tests need a server (see Docs/PostgreSQL.md, Testing)"
    /// Whether this test build has the PostgreSQL tests at all.
    static var isBuilt: Bool {
        #if PostgreSQL
        true
        #else
        false
        #endif
    }
}

/// Skipping is allowed on a developer's machine, never in CI.
struct PostgresAvailabilityTests {
    @Test("Where a database is required, the PostgreSQL tests are built and have one")
    func databaseWhereRequired() {
        #expect(
            !PostgresTestDatabase.isRequired || PostgresTestDatabase.isBuilt,
            "TILECAST_REQUIRE_DATABASE=1 but the tests were built without the trait PostgreSQL: swift test --traits PostgreSQL"
        )
        #expect(
            !PostgresTestDatabase.isRequired || PostgresTestDatabase.isAvailable,
            "TILECAST_REQUIRE_DATABASE=1 but TILECAST_DATABASE_URL is not set: the PostgreSQL tests were skipped"
        )
    }
}
