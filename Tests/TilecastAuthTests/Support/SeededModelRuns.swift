// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuthVerification

extension ModelChecker {
    /// Runs the sequences of seeds 1 to `sequences`, `length` operations each, from `generator`. At the
    /// first violation it records an issue with the shortest failing sequence found in
    /// `shrinkAttempts` runs, and stops; returns what the runs exercised.
    func runSeeded(
        _ sequences: Int,
        of length: Int,
        from generator: OperationGenerator,
        shrinkAttempts: Int = 400
    ) async -> ModelStatistics {
        var statistics = ModelStatistics()
        for seed in UInt64(1)...UInt64(sequences) {
            let sequence = generator.sequence(seed: seed, length: length)
            let (violation, counted) = await runCounting(sequence)
            statistics += counted
            if let violation {
                let shortest = await shrink(sequence, attempts: shrinkAttempts)
                Issue.record(
                    """
                    seed \(seed) (leeway \(leeway), \(deployment)): \(violation)
                    shortest failing sequence found (\(shortest.count) operations):
                    \(shortest.map { "  \($0)" }.joined(separator: "\n"))
                    """
                )
                break
            }
        }
        return statistics
    }
}
