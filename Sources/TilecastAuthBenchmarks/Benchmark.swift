// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// Measures the engine's operations through its public API, in runs, at given store sizes.
public struct Benchmark: Sendable {
    /// How much to measure.
    public struct Options: Sendable {
        /// Runs per operation; the report gives the median and the spread.
        public var runs = 7
        /// Operations timed in each run.
        public var operationsPerRun = 10_000
        /// Store sizes, in live grants.
        public var liveGrants = [1_000, 1_000_000]
        /// The operations to measure; all by default.
        public var operations = BenchmarkOperation.allCases
        /// Whether to measure two concurrent callers too.
        public var parallel = true

        public init() {}

        /// A quick pass that only shows the benchmark still works.
        public static var smoke: Options {
            var options = Options()
            options.runs = 2
            options.operationsPerRun = 200
            options.liveGrants = [1_000]
            return options
        }
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    /// Measures every operation at every store size with one caller, then code exchanges and refreshes
    /// with two concurrent callers at the smallest size.
    public func run(progress: (String) -> Void) async throws -> [BenchmarkMeasurement] {
        var measurements: [BenchmarkMeasurement] = []
        for size in options.liveGrants {
            progress("preparing a store with \(size) live grants")
            let world = try await BenchmarkWorld(liveGrants: size)
            for operation in options.operations {
                var runs: [Double] = []
                for _ in 0..<options.runs {
                    runs.append(try await measure(operation, in: world, callers: 1))
                }
                let measurement = BenchmarkMeasurement(
                    operation: operation.rawValue,
                    liveGrants: size,
                    callers: 1,
                    runs: runs,
                    operationsPerRun: options.operationsPerRun
                )
                progress("\(operation.rawValue) at \(size): \(String(format: "%.2f", measurement.median)) µs/op")
                measurements.append(measurement)
            }
        }
        if options.parallel, let size = options.liveGrants.first {
            let world = try await BenchmarkWorld(liveGrants: size)
            for operation in [BenchmarkOperation.codeExchange, .refresh] {
                var runs: [Double] = []
                for _ in 0..<options.runs {
                    runs.append(try await measure(operation, in: world, callers: 2))
                }
                measurements.append(
                    BenchmarkMeasurement(
                        operation: operation.rawValue,
                        liveGrants: size,
                        callers: 2,
                        runs: runs,
                        operationsPerRun: options.operationsPerRun
                    )
                )
            }
        }
        return measurements
    }

    /// One run: prepares the inputs untimed, then times `operationsPerRun` operations spread over
    /// `callers` concurrent tasks. Returns wall-clock microseconds per operation.
    private func measure(_ operation: BenchmarkOperation, in world: BenchmarkWorld, callers: Int) async throws -> Double
    {
        let count = options.operationsPerRun
        let engine = world.engine
        let work: [@Sendable () async -> Void]
        switch operation {
        case .codeExchange:
            work = try await world.issueCodes(count).map { code, verifier in
                let request = BenchmarkWorld.exchange(code: code, verifier: verifier)
                return { _ = await engine.handle(request: request) }
            }
        case .refresh, .refreshWithSession:
            let withSession = operation == .refreshWithSession
            work = try await world.signIns(count).map { signIn in
                let request = BenchmarkWorld.refresh(signIn.refreshToken, studioSession: withSession)
                return { _ = await engine.handle(request: request) }
            }
        case .sessionAuthentication:
            let pool = try await world.signIns(min(count, 1_000))
            work = (0..<count).map { index in
                let headers: HTTPHeaders = [
                    "Cookie": "theme=dark; __Host-tilecast_session=\(pool[index % pool.count].session)"
                ]
                return { _ = try? await engine.authenticateSession(headers: headers) }
            }
        case .bearerAuthentication:
            let pool = try await world.signIns(min(count, 1_000))
            work = (0..<count).map { index in
                let headers: HTTPHeaders = ["Authorization": "Bearer \(pool[index % pool.count].accessToken)"]
                return { _ = try? await engine.authenticateBearer(headers: headers) }
            }
        case .refusedExchange:
            let (code, _) = try await world.issueCodes(1)[0]
            let wrong = CodeChallenge.makeVerifier(using: SystemRandomSource())
            let request = BenchmarkWorld.exchange(code: code, verifier: wrong)
            work = Array(repeating: { _ = await engine.handle(request: request) }, count: count)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        if callers == 1 {
            // On the calling task itself: no task group, whose thread switching valgrind cannot follow.
            for step in work {
                await step()
            }
        } else {
            let share = (count + callers - 1) / callers
            let slices = stride(from: 0, to: count, by: share).map { Array(work[$0..<min(count, $0 + share)]) }
            await withTaskGroup(of: Void.self) { group in
                for slice in slices {
                    group.addTask {
                        for step in slice {
                            await step()
                        }
                    }
                }
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
        return elapsed / Double(count) * Double(callers)
    }
}
