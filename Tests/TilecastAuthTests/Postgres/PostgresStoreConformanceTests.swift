// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuth
import TilecastAuthPostgres
import TilecastAuthTesting

/// The whole store conformance kit against a real PostgreSQL server, each check in its own schema.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage))
struct PostgresStoreConformanceTests {
    private static let kit = StoreConformanceKit { clients in try await PostgresTestDatabase.makeStore(clients: clients)
    }

    @Test("PostgresGrantStore conforms", arguments: StoreConformanceCheck.all)
    func conforms(check: StoreConformanceCheck) async throws {
        try await Self.kit.run(check)
    }
}

/// Skipping is allowed on a developer's machine, never in CI.
struct PostgresAvailabilityTests {
    @Test("Where a database is required, the PostgreSQL tests have one")
    func databaseWhereRequired() {
        #expect(
            !PostgresTestDatabase.isRequired || PostgresTestDatabase.isAvailable,
            "TILECAST_REQUIRE_DATABASE=1 but TILECAST_DATABASE_URL is not set: the PostgreSQL tests were skipped"
        )
    }
}
