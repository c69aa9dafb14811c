// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuthVerification

/// Model-based randomized testing: seeded operation sequences run against the engine and the reference
/// model side by side. `tilecast-auth soak --seconds N` runs as many more as fit.
struct ModelBasedTests {
    /// Sequences per configuration in `swift test`, and operations per sequence.
    static let sequences = 150
    static let length = 60

    @Test("The engine agrees with the reference model under strict rotation", arguments: [0.0, 10.0])
    func engineAgreesWithModel(leeway: Double) async {
        let checker = ModelChecker(leeway: leeway)
        let generator = OperationGenerator(concurrentRefreshes: leeway == 0)
        for seed in UInt64(1)...UInt64(Self.sequences) {
            let sequence = generator.sequence(seed: seed, length: Self.length)
            if let violation = await checker.run(sequence) {
                let shortest = await checker.shrink(sequence)
                Issue.record(
                    """
                    seed \(seed) (leeway \(leeway)): \(violation)
                    shortest failing sequence (\(shortest.count) operations):
                    \(shortest.map { "  \($0)" }.joined(separator: "\n"))
                    """
                )
                return
            }
        }
    }
}
