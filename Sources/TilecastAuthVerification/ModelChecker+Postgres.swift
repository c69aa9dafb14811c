// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it the model checker runs in memory only
import TilecastAuth
public import TilecastAuthPostgres

extension ModelChecker.Deployment {
    /// Two migrated `PostgresGrantStore` instances on one fresh schema, each remembering what it wrote,
    /// the records read back through the first; the schema is dropped when the sequence is over.
    ///
    /// `configuration` is asked once per sequence and must name a schema no other sequence uses: its
    /// caller chooses how schemas are named and where they are recorded for cleanup.
    public static func twoPostgresInstances(
        configuration: @escaping @Sendable () throws -> PostgresConfiguration
    ) -> Self {
        .stores("two PostgreSQL instances") { clients in
            let configuration = try configuration()
            let first = PostgresGrantStore(clients: clients, configuration: configuration)
            let second = PostgresGrantStore(clients: clients, configuration: configuration)
            do {
                try await first.migrate()
                try await second.migrate()
            } catch {
                second.close()
                try? await first.dropSchema()
                first.close()
                throw error
            }
            return ModelStores(
                instances: [first, second],
                snapshot: { try await first.recordsSnapshot() },
                rememberedRecords: {
                    let (first, second) = (first.statistics, second.statistics)
                    return (
                        first.rememberedRecordsUsed + second.rememberedRecordsUsed,
                        first.rememberedRecordsFoundStale + second.rememberedRecordsFoundStale
                    )
                },
                close: {
                    second.close()
                    try? await first.dropSchema()
                    first.close()
                }
            )
        }
    }
}
#endif
