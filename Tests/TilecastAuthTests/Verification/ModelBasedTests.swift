// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuthVerification

/// Model-based randomized testing: seeded operation sequences run against the engine and the reference
/// model side by side. `tilecast-auth soak --seconds N` runs as many more as fit.
struct ModelBasedTests {
    /// Sequences per configuration in `swift test`, and operations per sequence.
    static let sequences = 150
    static let length = 60

    @Test(
        "The engine agrees with the reference model, with and without a leeway, on one reading instance and on two remembering ones",
        arguments: [0.0, 10.0],
        [ModelChecker.Deployment.single, .remembering(instances: 2)]
    )
    func engineAgreesWithModel(leeway: Double, deployment: ModelChecker.Deployment) async {
        let checker = ModelChecker(leeway: leeway, deployment: deployment)
        let generator = OperationGenerator()
        let statistics = await checker.runSeeded(Self.sequences, of: Self.length, from: generator)
        // Remembering instances must have answered from memory, and their writes met records the other
        // instance had used up — else the deployment tested a reading engine twice, or fresh records only.
        if case .remembering = deployment {
            #expect(statistics.rememberedRecordsUsed > Self.sequences, "\(statistics.rememberedRecordsUsed)")
            #expect(statistics.rememberedRecordsFoundStale > 0, "\(statistics.rememberedRecordsFoundStale)")
        }
        // With a leeway, bursts of one token must have had retries succeed, else they were not tested.
        if leeway > 0 {
            #expect(statistics.concurrentRetriesWithinLeeway > 0, "\(statistics.concurrentRetriesWithinLeeway)")
            #expect(statistics.rotationsSupersededInBursts > 0, "\(statistics.rotationsSupersededInBursts)")
        }
    }
}
