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
