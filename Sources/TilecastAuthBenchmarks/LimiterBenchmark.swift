// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// `InMemoryRateLimiter.admit` below its key limit and at it under key churn, side by side: the cost a
/// flood of fresh addresses puts on every request while the limiter holds as many keys as it may.
public enum LimiterBenchmark: Sendable {
    /// Median µs per admission over `runs` interleaved runs.
    public struct Result: Sendable {
        /// Admissions cycling over 1,000 known keys, far below the limit.
        public var belowLimit: Double
        /// Admissions of fresh keys, one a millisecond, at the limit, with each bucket full again a second
        /// after its admission — so every sweep at the limit also finds refilled buckets to forget.
        public var atLimit: Double
    }

    public static func run(runs: Int, admissions: Int, keyLimit: Int) async throws -> Result {
        var below: [Double] = []
        var at: [Double] = []
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<runs {
            let known = InMemoryRateLimiter(capacity: Int.max / 2, refillInterval: 1, maximumTrackedKeys: keyLimit)
            let keys = (0..<1_000).map { RateLimitKey(rawValue: "known-\($0)") }
            below.append(
                try await time(admissions) { index in
                    _ = try await known.admit(keys[index % keys.count], at: start)
                }
            )

            let churned = InMemoryRateLimiter(capacity: 2, refillInterval: 1, maximumTrackedKeys: keyLimit)
            let fresh = (0..<(keyLimit + admissions)).map { RateLimitKey(rawValue: "fresh-\($0)") }
            for index in 0..<keyLimit {
                _ = try await churned.admit(fresh[index], at: start.addingTimeInterval(Double(index) / 1_000))
            }
            at.append(
                try await time(admissions) { index in
                    let position = keyLimit + index
                    _ = try await churned.admit(fresh[position], at: start.addingTimeInterval(Double(position) / 1_000))
                }
            )
        }
        return Result(belowLimit: BenchmarkMeasurement.median(of: below), atLimit: BenchmarkMeasurement.median(of: at))
    }

    private static func time(_ count: Int, _ body: (Int) async throws -> Void) async rethrows -> Double {
        let begin = DispatchTime.now().uptimeNanoseconds
        for index in 0..<count {
            try await body(index)
        }
        return Double(DispatchTime.now().uptimeNanoseconds - begin) / 1_000 / Double(count)
    }
}
