// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuthVerification

@testable import TilecastAuth
@testable import TilecastAuthPostgres

/// The model checker on the real store: two `PostgresGrantStore` instances on one schema, each
/// remembering what it wrote (`PostgresConfiguration.rememberedRecords`), the operations taking turns
/// between them and the bursts spread over both, every record read back from the server after each step.
/// The in-memory runs of `ModelBasedTests` check the engine; these check it on the functions, locks and
/// transactions users run, with records one instance wrote and the other used up.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresModelTests {
    /// Sequences per leeway, and operations per sequence: about a second a sequence.
    static let sequences = 40
    static let length = 60

    @Test(
        "The engine agrees with the reference model on two PostgreSQL instances that remember what they wrote",
        arguments: [0.0, 10.0]
    )
    func twoRememberingInstances(leeway: Double) async {
        let checker = ModelChecker(
            leeway: leeway,
            deployment: .twoPostgresInstances {
                try PostgresTestDatabase.configuration(
                    schema: PostgresTestDatabase.uniqueSchema(),
                    maximumConnections: 4
                )
            }
        )
        let generator = OperationGenerator()
        // Shrinking on a server costs a run per attempt: a few dozen, not the default.
        let statistics = await checker.runSeeded(Self.sequences, of: Self.length, from: generator, shrinkAttempts: 40)
        #expect(statistics.operations == Self.sequences * Self.length)
        // The instances answered lookups from what they wrote, and their writes met records the other
        // instance had used up: the remembered path ran on the server, fresh and stale.
        #expect(statistics.rememberedRecordsUsed > Self.sequences, "\(statistics.rememberedRecordsUsed)")
        #expect(statistics.rememberedRecordsFoundStale > 0, "\(statistics.rememberedRecordsFoundStale)")
        if leeway > 0 {
            #expect(statistics.concurrentRetriesWithinLeeway > 0, "\(statistics.concurrentRetriesWithinLeeway)")
            #expect(statistics.rotationsSupersededInBursts > 0, "\(statistics.rotationsSupersededInBursts)")
        }
    }
}
#endif
