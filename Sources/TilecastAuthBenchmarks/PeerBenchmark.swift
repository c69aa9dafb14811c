// SPDX-License-Identifier: Apache-2.0

import Foundation

/// The peer libraries' token endpoints (oauthlib, Authlib), run by `shared/bench/run-peers` on the same
/// work, so that ratios are measured side by side on one machine in one run.
public enum PeerBenchmark: Sendable {
    /// One peer's result: median µs/op of each operation over its runs.
    public struct Result: Sendable {
        public let library: String
        public let codeExchange: Double
        public let refresh: Double
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
        func median(_ values: [Double]?) -> Double? {
            guard let values, !values.isEmpty else { return nil }
            return values.sorted()[values.count / 2]
        }
        return samples.keys.sorted().compactMap { library in
            guard let exchange = median(samples[library]?["code_exchange"]),
                let refresh = median(samples[library]?["refresh"])
            else { return nil }
            return Result(library: library, codeExchange: exchange, refresh: refresh)
        }
    }
}
