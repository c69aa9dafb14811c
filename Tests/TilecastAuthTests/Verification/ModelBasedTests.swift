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
        let generator = OperationGenerator(concurrentRefreshes: leeway == 0)
        var statistics = ModelStatistics()
        for seed in UInt64(1)...UInt64(Self.sequences) {
            let sequence = generator.sequence(seed: seed, length: Self.length)
            let (violation, counted) = await checker.runCounting(sequence)
            statistics += counted
            if let violation {
                let shortest = await checker.shrink(sequence)
                Issue.record(
                    """
                    seed \(seed) (leeway \(leeway), \(deployment)): \(violation)
                    shortest failing sequence (\(shortest.count) operations):
                    \(shortest.map { "  \($0)" }.joined(separator: "\n"))
                    """
                )
                return
            }
        }
        // Remembering instances must have answered from memory, and their writes met records the other
        // instance had used up — else the deployment tested a reading engine twice, or fresh records only.
        if case .remembering = deployment {
            #expect(statistics.rememberedRecordsUsed > Self.sequences, "\(statistics.rememberedRecordsUsed)")
            #expect(statistics.rememberedRecordsFoundStale > 0, "\(statistics.rememberedRecordsFoundStale)")
        }
    }
}
