// SPDX-License-Identifier: Apache-2.0

/// The measured cost of one operation: microseconds per operation in each run.
public struct BenchmarkMeasurement: Sendable {
    public let operation: String
    public let liveGrants: Int
    public let callers: Int
    /// µs/op of each run.
    public let runs: [Double]
    public let operationsPerRun: Int
    /// On PostgreSQL: round trips per operation, store and rate limiter together (median over the runs).
    public var roundTripsPerOperation: Double? = nil
    /// On PostgreSQL: codes and refresh tokens per operation the store answered from what it remembers of
    /// its own writes, each a round trip saved (median over the runs).
    public var rememberedPerOperation: Double? = nil
    /// On PostgreSQL with `pg_stat_statements`: statements the server executed per operation, those
    /// inside the store's functions included (median over the runs).
    public var statementsPerOperation: Double? = nil

    public var median: Double { Self.median(of: runs) }

    /// The median of `values`; 0 for none.
    public static func median(of values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    public var minimum: Double { runs.min() ?? 0 }
    public var maximum: Double { runs.max() ?? 0 }

    /// Operations per second across all callers, from the median.
    public var throughput: Double { median > 0 ? Double(callers) * 1_000_000 / median : 0 }
}

/// How an operation's cost grows with the store: its runs at a larger store against its runs at the
/// smallest, one caller each.
///
/// Two figures. ``ratioOfMedians`` divides the two medians. ``pairedRatio`` divides the two runs of each
/// round — timed together, in memory interleaved in slices (``Benchmark/run(progress:afterRound:)``) —
/// and takes the median of those ratios: a slow stretch of a shared machine that covers both runs of a
/// round cancels out of it,
/// where the medians of two sets of runs may each land on a different side of a machine that alternates
/// between a fast and a slow state (on 2026-12-04 the code exchange's rounds at 10³ grants were 4.0–4.3 µs
/// or 6.9–8.0 µs, and its two medians 4.25 and 7.00 µs).
public struct BenchmarkScaling: Sendable, Equatable {
    public let operation: String
    public let smallGrants: Int
    public let largeGrants: Int
    /// The median over the rounds of the larger store's run divided by the smaller store's.
    public let pairedRatio: Double
    /// The larger store's median divided by the smaller store's.
    public let ratioOfMedians: Double

    /// Each operation measured with one caller at more than one store size: each larger size against the
    /// smallest, in the order of `measurements`. Runs are paired by position; a size whose number of runs
    /// differs from the smallest's is left out.
    public static func of(_ measurements: [BenchmarkMeasurement]) -> [BenchmarkScaling] {
        let single = measurements.filter { $0.callers == 1 }
        var operations: [String] = []
        for measurement in single where !operations.contains(measurement.operation) {
            operations.append(measurement.operation)
        }
        var scalings: [BenchmarkScaling] = []
        for operation in operations {
            let sizes = single.filter { $0.operation == operation }
            guard let small = sizes.min(by: { $0.liveGrants < $1.liveGrants }) else { continue }
            for large in sizes where large.liveGrants > small.liveGrants && large.runs.count == small.runs.count {
                let ratios = zip(large.runs, small.runs).compactMap { $1 > 0 ? $0 / $1 : nil }
                guard !ratios.isEmpty, small.median > 0 else { continue }
                scalings.append(
                    BenchmarkScaling(
                        operation: operation,
                        smallGrants: small.liveGrants,
                        largeGrants: large.liveGrants,
                        pairedRatio: BenchmarkMeasurement.median(of: ratios),
                        ratioOfMedians: large.median / small.median
                    )
                )
            }
        }
        return scalings
    }
}
