// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Testing
import TilecastAuth
import TilecastAuthPostgres
import TilecastAuthTesting

/// The whole store conformance kit against a real PostgreSQL server, each check in its own schema.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresStoreConformanceTests {
    private static let kit = StoreConformanceKit { clients in try await PostgresTestDatabase.makeStore(clients: clients)
    }

    @Test("PostgresGrantStore conforms", arguments: StoreConformanceCheck.all)
    func conforms(check: StoreConformanceCheck) async throws {
        try await Self.kit.run(check)
    }
}
#endif
