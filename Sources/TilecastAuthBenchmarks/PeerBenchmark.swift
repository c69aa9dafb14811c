// SPDX-License-Identifier: Apache-2.0

import Foundation

/// The peer libraries' token endpoints (oauthlib, Authlib), run by `shared/bench/run-peers` on the same
/// work, so that ratios are measured side by side on one machine in one run.
public enum PeerBenchmark: Sendable {
    /// One peer's result: µs/op of each operation in each run, and their medians.
    public struct Result: Sendable {
        public let library: String
        public var codeExchangeRuns: [Double]
        public var refreshRuns: [Double]

        public var codeExchange: Double { BenchmarkMeasurement.median(of: codeExchangeRuns) }
        public var refresh: Double { BenchmarkMeasurement.median(of: refreshRuns) }

        /// This result with the runs of `other`, a later measurement of the same library, added.
        public func adding(_ other: Result) -> Result {
            var combined = self
            combined.codeExchangeRuns += other.codeExchangeRuns
            combined.refreshRuns += other.refreshRuns
            return combined
        }
    }

    /// Runs the script with `operations` per run and `runs` runs; `nil` when it cannot run.
    public static func run(script: String, operations: Int, runs: Int) -> [Result]? {
        guard let output = Shell.run("/bin/bash", [script, String(operations), String(runs)]) else { return nil }
        var samples: [String: [String: [Double]]] = [:]
        for line in output.split(separator: "\n") {
            // "<lib> code_exchange n=2000 ops_per_s=5100 us_per_op=196.10"
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let last = fields.last, last.hasPrefix("us_per_op="),
                let value = Double(last.dropFirst("us_per_op=".count))
            else { continue }
            samples[String(fields[0]), default: [:]][String(fields[1]), default: []].append(value)
        }
        let results = samples.keys.sorted().compactMap { library -> Result? in
            guard let exchange = samples[library]?["code_exchange"], !exchange.isEmpty,
                let refresh = samples[library]?["refresh"], !refresh.isEmpty
            else { return nil }
            return Result(library: library, codeExchangeRuns: exchange, refreshRuns: refresh)
        }
        return results.isEmpty ? nil : results
    }
}
