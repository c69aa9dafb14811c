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
        /// The benchmark's round after which each run was measured, one for each run of both operations;
        /// empty when the runs were not measured between rounds.
        public var rounds: [Int] = []

        public var codeExchange: Double { BenchmarkMeasurement.median(of: codeExchangeRuns) }
        public var refresh: Double { BenchmarkMeasurement.median(of: refreshRuns) }

        /// This result with the runs of `other`, a later measurement of the same library, added.
        public func adding(_ other: Result) -> Result {
            var combined = self
            combined.codeExchangeRuns += other.codeExchangeRuns
            combined.refreshRuns += other.refreshRuns
            combined.rounds += other.rounds
            return combined
        }

        /// This result as measured after the benchmark's round `round`.
        public func measured(afterRound round: Int) -> Result {
            var result = self
            result.rounds = Array(repeating: round, count: max(codeExchangeRuns.count, refreshRuns.count))
            return result
        }

        /// The peer's code exchange against ours (`ours`: our runs, one per round), as the median of the
        /// rounds' ratios: each of the peer's runs divided by our run of the round it followed. On a
        /// machine that changes speed between minutes, a ratio of medians can divide a slow minute's figure
        /// by a fast one's; a ratio within a round compares the same minutes. `nil` when no run pairs.
        public func pairedCodeExchangeAdvantage(over ours: [Double]) -> Double? {
            Self.pairedAdvantage(codeExchangeRuns, rounds: rounds, over: ours)
        }

        /// The peer's refresh against ours, as ``pairedCodeExchangeAdvantage(over:)``.
        public func pairedRefreshAdvantage(over ours: [Double]) -> Double? {
            Self.pairedAdvantage(refreshRuns, rounds: rounds, over: ours)
        }

        private static func pairedAdvantage(_ runs: [Double], rounds: [Int], over ours: [Double]) -> Double? {
            guard runs.count == rounds.count else { return nil }
            let ratios = zip(runs, rounds).compactMap { run, round in
                ours.indices.contains(round) && ours[round] > 0 ? run / ours[round] : nil
            }
            return ratios.isEmpty ? nil : BenchmarkMeasurement.median(of: ratios)
        }
    }

    /// The Python the peers run on: its version and where it is installed, as the virtual environment of
    /// `shared/bench/run-peers` reports them (`PEER_VENV`, or `~/.cache/tilecast-peer-venv`, which the
    /// script makes from the first `python3` on the `PATH`); `nil` before the script has made it.
    ///
    /// It is part of the result: the same Authlib and oauthlib took 1.22–1.44 times as long on a default
    /// pyenv build (first on the `PATH` of the machines of 2026-12-04) as on Debian's Python, run alone
    /// (`Docs/Performance.md`, "The peers' Python").
    public static func interpreter() -> (version: String, prefix: String)? {
        let environment = ProcessInfo.processInfo.environment
        let venv =
            environment["PEER_VENV"] ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/tilecast-peer-venv"
        let script = "import sys; print(sys.version.split()[0], sys.base_prefix)"
        guard let output = Shell.run(venv + "/bin/python", ["-c", script]) else { return nil }
        let fields = output.split(separator: " ", maxSplits: 1).map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard fields.count == 2, !fields[0].isEmpty, !fields[1].isEmpty else { return nil }
        return (fields[0], fields[1])
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

/// A peer library on PostgreSQL: `shared/bench/run-peers-postgres`, Authlib's authorization server with
/// SQLAlchemy and psycopg on the same database server, measured between the rounds of
/// `tilecast-auth bench --store postgres` so that its figures and ours come from the same minutes.
public enum PostgresPeerBenchmark: Sendable {
    /// One peer operation at one number of callers: µs per operation per caller in each run.
    public struct Result: Sendable {
        public let library: String
        public let operation: String
        public let callers: Int
        public var runs: [Double]

        public var median: Double { BenchmarkMeasurement.median(of: runs) }
    }

    /// One run of `operations` code exchanges and refreshes with each number of `callers`; `nil` when the
    /// script cannot run or prints nothing it measured.
    public static func run(script: String, databaseURL: String, operations: Int, callers: [Int]) -> [Result]? {
        guard
            let output = Shell.run(
                "/bin/bash",
                [script, databaseURL, String(operations), "1"],
                environment: ["PEER_PG_CALLERS": callers.map(String.init).joined(separator: " ")]
            )
        else { return nil }
        var results: [Result] = []
        for line in output.split(separator: "\n") where !line.hasPrefix("#") && !line.contains("median_of_") {
            // "authlib_pg code_exchange callers=1 ops_per_s=317 us_per_op=3157.42"
            let fields = line.split(separator: " ")
            guard fields.count >= 5, fields[2].hasPrefix("callers="), let count = Int(fields[2].dropFirst(8)),
                let last = fields.last, last.hasPrefix("us_per_op="),
                let value = Double(last.dropFirst("us_per_op=".count))
            else { continue }
            let library = fields[0].hasSuffix("_pg") ? String(fields[0].dropLast(3)) : String(fields[0])
            results.append(Result(library: library, operation: String(fields[1]), callers: count, runs: [value]))
        }
        return results.isEmpty ? nil : results
    }

    /// `results` of several runs, each library, operation and number of callers once with all its runs.
    public static func combine(_ results: [Result]) -> [Result] {
        var combined: [Result] = []
        for result in results {
            if let index = combined.firstIndex(where: {
                $0.library == result.library && $0.operation == result.operation && $0.callers == result.callers
            }) {
                combined[index].runs += result.runs
            } else {
                combined.append(result)
            }
        }
        return combined
    }
}
