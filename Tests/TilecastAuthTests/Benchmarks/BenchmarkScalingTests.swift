// SPDX-License-Identifier: Apache-2.0

import Synchronization
import Testing

@testable import TilecastAuthBenchmarks

/// The benchmark's figure for how an operation's cost grows with the store.
struct BenchmarkScalingTests {
    private static func measured(
        _ operation: String,
        _ grants: Int,
        callers: Int = 1,
        _ runs: [Double]
    )
        -> BenchmarkMeasurement
    {
        BenchmarkMeasurement(
            operation: operation,
            liveGrants: grants,
            callers: callers,
            runs: runs,
            operationsPerRun: 10_000
        )
    }

    @Test("Runs are paired round by round: a machine alternating between two speeds cancels out of the ratio")
    func pairsRounds() throws {
        // The code exchange's rounds of 2026-12-04, 11:29 at 10³ grants, and the same rounds 10 % slower at
        // 10⁶ but in the slow state in one round more: the medians fall in different states.
        let small = [4.18, 7.99, 4.03, 4.25, 6.92, 4.10, 7.97]
        var large = small.map { $0 * 1.1 }
        large[0] = 7.9  // the machine went slow between the round's two runs
        let scalings = BenchmarkScaling.of([
            Self.measured("code_exchange", 1_000, small), Self.measured("code_exchange", 1_000_000, large),
        ])
        let scaling = try #require(scalings.first)
        #expect(scalings.count == 1)
        #expect(scaling.smallGrants == 1_000 && scaling.largeGrants == 1_000_000)
        #expect(abs(scaling.pairedRatio - 1.1) < 1e-9)
        // The large runs' median is a slow round's, 7.61 against 4.25: the medians alone show 1.79×.
        #expect(scaling.ratioOfMedians > 1.5)
    }

    @Test("Only one caller's measurements, each larger size against the smallest, sizes with other run counts left out")
    func selectsComparableMeasurements() {
        let scalings = BenchmarkScaling.of([
            Self.measured("refresh", 1_000_000, [6, 6, 6]),
            Self.measured("refresh", 1_000, [2, 3, 4]),
            Self.measured("refresh", 100_000, [4, 6, 8]),
            Self.measured("refresh", 10_000, [1, 2]),
            Self.measured("refresh", 1_000, callers: 2, [1, 1, 1]),
            Self.measured("bearer_authentication", 1_000, [1, 1, 1]),
        ])
        #expect(scalings.map(\.largeGrants) == [1_000_000, 100_000])
        #expect(scalings.allSatisfy { $0.operation == "refresh" && $0.smallGrants == 1_000 })
        #expect(scalings.map(\.pairedRatio) == [2, 2])
        #expect(scalings.map(\.ratioOfMedians) == [2, 2])
    }

    @Test("Within a round an operation's sizes are measured one after the other; the parallel cases come last")
    func orderPairsSizes() {
        var options = Benchmark.Options()
        options.operations = [.codeExchange, .refresh, .bearerAuthentication]
        options.liveGrants = [1_000, 1_000_000]
        let cases = Benchmark.cases(options).map { "\($0.operation.rawValue) \($0.size) \($0.callers)" }
        #expect(
            cases == [
                "code_exchange 1000 1", "code_exchange 1000000 1", "refresh 1000 1", "refresh 1000000 1",
                "bearer_authentication 1000 1", "bearer_authentication 1000000 1",
                "code_exchange 1000 2", "refresh 1000 2",
            ]
        )
    }

    @Test("Store sizes timed interleaved: every operation of every size is timed and gets its answer")
    func interleavedRunsCountEveryOperation() async throws {
        var options = Benchmark.Options()
        options.runs = 2
        // Not a multiple of the slice, so that the last turn is a shorter one.
        options.operationsPerRun = Benchmark.interleavedSlice * 2 + 37
        options.liveGrants = [10, 20]
        options.operations = [.codeExchange, .refusedExchange, .bearerAuthentication]
        options.parallel = false
        var rounds: [Int] = []
        let measurements = try await Benchmark(options: options).run(
            progress: { _ in },
            afterRound: { rounds.append($0) }
        )
        #expect(rounds == [0, 1])
        #expect(
            measurements.map { "\($0.operation) \($0.liveGrants)" } == [
                "code_exchange 10", "code_exchange 20", "refused_exchange 10", "refused_exchange 20",
                "bearer_authentication 10", "bearer_authentication 20",
            ]
        )
        // A run whose operations did not all get their answer throws instead (`BenchmarkFailure`).
        #expect(measurements.allSatisfy { $0.runs.count == 2 && $0.runs.allSatisfy { $0 > 0 } })
    }

    @Test("Interleaved, each size's time is the sum of its slices; timed alone, one span")
    func interleavedTimeSumsSlices() async throws {
        var options = Benchmark.Options()
        options.runs = 1
        options.operationsPerRun = Benchmark.interleavedSlice * 2 + 37  // three slices: 500, 500, 37
        options.operations = [.refusedExchange]
        options.parallel = false
        // A clock that moves 1 ms at every reading: a timed span is 1 ms whatever it holds.
        let readings = Mutex<UInt64>(0)
        let clock: @Sendable () -> UInt64 = {
            readings.withLock {
                $0 += 1_000_000
                return $0
            }
        }
        let count = Double(options.operationsPerRun)

        options.liveGrants = [10, 20]
        var interleaved = Benchmark(options: options)
        interleaved.clock = clock
        let both = try await interleaved.run(progress: { _ in })
        // Three slices of each size, 1 ms each.
        #expect(both.map(\.runs) == [[3_000 / count], [3_000 / count]])

        options.liveGrants = [10]
        var alone = Benchmark(options: options)
        alone.clock = clock
        #expect(try await alone.run(progress: { _ in }).map(\.runs) == [[1_000 / count]])
    }

    @Test("An operation's sizes are timed back to back as one group; each parallel case is a group of its own")
    func groupsSizesTimedTogether() {
        var options = Benchmark.Options()
        options.operations = [.codeExchange, .refresh, .bearerAuthentication]
        options.liveGrants = [1_000, 100_000, 1_000_000]
        let groups = Benchmark.timedTogether(Benchmark.cases(options))
        #expect(groups == [0..<3, 3..<6, 6..<9, 9..<10, 10..<11])

        options.liveGrants = [1_000]
        options.parallel = false
        #expect(Benchmark.timedTogether(Benchmark.cases(options)) == [0..<1, 1..<2, 2..<3])
        #expect(Benchmark.timedTogether([]).isEmpty)
    }
}
