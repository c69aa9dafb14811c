// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuth
import TilecastAuthPostgres

/// The PostgreSQL server the PostgreSQL tests run against: `TILECAST_DATABASE_URL`, a libpq connection
/// string or URI. Without it those tests report themselves skipped; `.ci/run` starts a throwaway
/// cluster, sets it, and sets `TILECAST_REQUIRE_DATABASE=1` so that skipping fails instead.
enum PostgresTestDatabase {
    static let url = ProcessInfo.processInfo.environment["TILECAST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isRequired = ProcessInfo.processInfo.environment["TILECAST_REQUIRE_DATABASE"] == "1"
    static var isAvailable: Bool { url != nil }
    static let skipMessage: Comment =
        "TILECAST_DATABASE_URL is not set: the PostgreSQL tests need a server (see Docs/PostgreSQL.md, Testing)"

    /// A schema name no other test uses, so tests run in parallel against one database.
    static func uniqueSchema() -> String {
        "tilecast_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    static func configuration(schema: String, maximumConnections: Int = 10) -> PostgresConfiguration {
        PostgresConfiguration(databaseURL: url ?? "", schema: schema, maximumConnections: maximumConnections)
    }

    /// A migrated store in a fresh schema.
    static func makeStore(
        clients: [Client],
        schema: String = uniqueSchema(),
        maximumConnections: Int = 10
    ) async throws -> PostgresGrantStore {
        let store = PostgresGrantStore(
            clients: clients,
            configuration: configuration(schema: schema, maximumConnections: maximumConnections)
        )
        try await store.migrate()
        return store
    }
}
