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
        /// Whether to measure concurrent callers too.
        public var parallel = true
        /// The numbers of concurrent callers measured when `parallel` is set.
        public var parallelCallers = [2]
        /// Concurrent callers of every operation at every store size: 1, but for profiling one operation
        /// with several (`--only OP --callers N`).
        public var callers = 1
        /// The store the engine runs on.
        public var store = BenchmarkStore.memory
        /// How the codes name their account, redirect URI and scope: shared by default, as the peers'
        /// benchmark does (one user); as a server receives them with `--strings as-received`.
        public var strings = RequestStrings.shared

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
    /// The clock the timed loops read, in nanoseconds; a test sets one of its own to check what is
    /// timed.
    var clock: @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }

    public init(options: Options) {
        self.options = options
    }

    /// Stores up to this size are built afresh for every run, so that the grants earlier runs left behind
    /// do not count as live grants; larger ones are built once and grow by one run's operations at most.
    public static let rebuiltSizeLimit = 10_000

    /// Measures every operation at every store size with one caller, and code exchanges and refreshes
    /// with two concurrent callers at the smallest size.
    ///
    /// The runs are interleaved: round after round, each case is measured once, so a slow minute on a
    /// shared machine spreads over every case instead of landing on one. Within a round an operation's
    /// store sizes are all prepared first and then timed together — in memory with one caller interleaved
    /// (``timeInterleaved(_:)``) — so that ``BenchmarkScaling`` can pair them round by round.
    /// `afterRound` runs after each round — where the caller measures whatever it compares against, in the
    /// same rhythm.
    public func run(
        progress: (String) -> Void,
        afterRound: (Int) async -> Void = { _ in }
    ) async throws -> [BenchmarkMeasurement] {
        let cases = Self.cases(options)

        var persistentWorlds: [Int: BenchmarkWorld] = [:]
        for size in Set(options.liveGrants) where size > Self.rebuiltSizeLimit {
            progress("preparing a store with \(size) live grants")
            // Sized for what it will hold, as a server is sized for its load: the live grants and the
            // records every run adds (nothing expires during a benchmark). Without that, the run in which
            // an index outgrows its size also pays for the kernel's first touch of the larger index.
            let casesAtSize = cases.filter { $0.size == size }.count
            persistentWorlds[size] = try await BenchmarkWorld(
                liveGrants: size,
                headroom: casesAtSize * options.runs * options.operationsPerRun,
                store: options.store,
                strings: options.strings
            )
        }

        var samples = Array(repeating: [Sample](), count: cases.count)
        for round in 0..<options.runs {
            for group in Self.timedTogether(cases) {
                // Every case of the group is prepared first and then timed — in memory with one caller
                // interleaved (`timeInterleaved`), otherwise one right after the other — so that no
                // preparation falls between the timed loops of an operation's store sizes.
                var prepared: [(index: Int, run: PreparedRun)] = []
                var freshWorlds: [BenchmarkWorld] = []
                for index in group {
                    let measured = cases[index]
                    let world: BenchmarkWorld
                    if let persistent = persistentWorlds[measured.size] {
                        world = persistent
                    } else {
                        // Room for the grants this run's inputs add, so the timed loop never waits for a
                        // dictionary to double.
                        world = try await BenchmarkWorld(
                            liveGrants: measured.size,
                            headroom: 2 * options.operationsPerRun,
                            store: options.store,
                            strings: options.strings
                        )
                        freshWorlds.append(world)
                    }
                    prepared.append((index, try await prepare(measured.operation, in: world)))
                }
                if prepared.count > 1, cases[group.lowerBound].callers == 1, options.store == .memory {
                    let interleaved = try await timeInterleaved(prepared.map(\.run))
                    for ((index, _), sample) in zip(prepared, interleaved) {
                        samples[index].append(sample)
                    }
                } else {
                    for (index, run) in prepared {
                        samples[index].append(try await time(run, callers: cases[index].callers))
                    }
                }
                for world in freshWorlds {
                    await world.tearDown()
                }
            }
            let latest = cases.indices.prefix(3).map { index in
                "\(cases[index].operation.rawValue) at \(cases[index].size) "
                    + "\(String(format: "%.2f", samples[index][round].microseconds)) µs"
            }
            progress("round \(round + 1) of \(options.runs): \(latest.joined(separator: ", ")), …")
            await afterRound(round)
        }
        for world in persistentWorlds.values {
            await world.tearDown()
        }
        return cases.indices.map { index in
            BenchmarkMeasurement(
                operation: cases[index].operation.rawValue,
                liveGrants: cases[index].size,
                callers: cases[index].callers,
                runs: samples[index].map(\.microseconds),
                operationsPerRun: options.operationsPerRun,
                roundTripsPerOperation: Self.median(samples[index].compactMap(\.roundTrips)),
                rememberedPerOperation: Self.median(samples[index].compactMap(\.remembered)),
                statementsPerOperation: Self.median(samples[index].compactMap(\.statements))
            )
        }
    }

    /// What one round measures, in order: each operation at every store size with one caller (or
    /// `callers`), its sizes next to each other (they are timed together: ``timedTogether(_:)``); then
    /// code exchanges and refreshes with each number of `parallelCallers` at the smallest size.
    static func cases(_ options: Options) -> [(operation: BenchmarkOperation, size: Int, callers: Int)] {
        var cases: [(operation: BenchmarkOperation, size: Int, callers: Int)] = []
        for operation in options.operations {
            for size in options.liveGrants {
                cases.append((operation, size, options.callers))
            }
        }
        if options.parallel, let size = options.liveGrants.first {
            for callers in options.parallelCallers {
                for operation in [BenchmarkOperation.codeExchange, .refresh]
                where options.operations.contains(operation) {
                    cases.append((operation, size, callers))
                }
            }
        }
        return cases
    }

    /// The cases of one round in the groups timed back to back: each run of adjacent cases that differ
    /// only in store size (one operation's sizes, as ``cases(_:)`` orders them), as indices into `cases`.
    static func timedTogether(_ cases: [(operation: BenchmarkOperation, size: Int, callers: Int)]) -> [Range<Int>] {
        var groups: [Range<Int>] = []
        var start = cases.startIndex
        while start < cases.endIndex {
            var end = start + 1
            while end < cases.endIndex, cases[end].operation == cases[start].operation,
                cases[end].callers == cases[start].callers
            {
                end += 1
            }
            groups.append(start..<end)
            start = end
        }
        return groups
    }

    /// One run's figures: µs per operation and, on PostgreSQL, round trips and statements per operation.
    private struct Sample {
        var microseconds: Double
        var roundTrips: Double?
        var remembered: Double?
        var statements: Double?
    }

    private static func median(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : BenchmarkMeasurement.median(of: values)
    }

    /// One run's inputs, prepared untimed, and the world they were prepared in.
    private struct PreparedRun {
        var operation: BenchmarkOperation
        var world: BenchmarkWorld
        var work: PreparedWork
    }

    /// Prepares one run of `operation` in `world`: `operationsPerRun` inputs, untimed.
    private func prepare(_ operation: BenchmarkOperation, in world: BenchmarkWorld) async throws -> PreparedRun {
        let count = options.operationsPerRun
        let work: PreparedWork
        switch operation {
        case .codeExchange:
            work = .requests(
                try await world.issueCodes(count).map { code, verifier in
                    BenchmarkWorld.exchange(code: code, verifier: verifier)
                },
                answered: 200
            )
        case .refresh, .refreshWithSession:
            let withSession = operation == .refreshWithSession
            work = .requests(
                try await world.signIns(count).map { signIn in
                    BenchmarkWorld.refresh(signIn.refreshToken, studioSession: withSession)
                },
                answered: 200
            )
        case .sessionAuthentication:
            let pool = try await world.signIns(min(count, 1_000))
            work = .sessionChecks(
                (0..<count).map { index in
                    ["Cookie": "theme=dark; __Host-tilecast_session=\(pool[index % pool.count].session)"]
                }
            )
        case .bearerAuthentication:
            let pool = try await world.signIns(min(count, 1_000))
            work = .bearerChecks(
                (0..<count).map { index in ["Authorization": "Bearer \(pool[index % pool.count].accessToken)"] }
            )
        case .refusedExchange:
            let (code, _) = try await world.issueCodes(1)[0]
            let wrong = CodeChallenge.makeVerifier(using: SystemRandomSource())
            work = .requests(
                Array(repeating: BenchmarkWorld.exchange(code: code, verifier: wrong), count: count),
                answered: 400
            )
        }
        return PreparedRun(operation: operation, world: world, work: work)
    }

    /// Operations timed in one slice of an interleaved group (``timeInterleaved(_:)``).
    public static let interleavedSlice = 500

    /// Times prepared runs of one caller in memory, each a different store size of one operation,
    /// interleaved: ``interleavedSlice`` operations of each in turn, the order reversed every other
    /// turn, each run's time the sum of its slices. This machine changes speed within tens of
    /// milliseconds (a run of 2,000 exchanges, about 12 ms, took 4.5 µs or 9.7 µs an operation from one
    /// run to the next), so two runs timed one after the other can still fall in different states; slices
    /// a few milliseconds long, taken in turn, give each size the same mix of them.
    private func timeInterleaved(_ runs: [PreparedRun]) async throws -> [Sample] {
        let count = options.operationsPerRun
        var nanoseconds = [UInt64](repeating: 0, count: runs.count)
        var answered = [Int](repeating: 0, count: runs.count)
        var turn = 0
        for first in stride(from: 0, to: count, by: Self.interleavedSlice) {
            let slice = first..<min(count, first + Self.interleavedSlice)
            for position in turn.isMultiple(of: 2) ? Array(runs.indices) : runs.indices.reversed() {
                let (work, engine) = (runs[position].work, runs[position].world.engine)
                let start = clock()
                answered[position] += await work.perform(slice, on: engine)
                nanoseconds[position] += clock() - start
            }
            turn += 1
        }
        return try runs.indices.map { position in
            guard answered[position] == count else {
                throw BenchmarkFailure(
                    operation: runs[position].operation,
                    expected: count,
                    answered: answered[position]
                )
            }
            return Sample(microseconds: Double(nanoseconds[position]) / 1_000 / Double(count))
        }
    }

    /// Times one prepared run: its `operationsPerRun` operations spread over `callers` concurrent tasks.
    private func time(_ run: PreparedRun, callers: Int) async throws -> Sample {
        let (operation, world, work) = (run.operation, run.world, run.work)
        let count = options.operationsPerRun
        let engine = world.engine
        let roundTripsBefore = world.roundTrips
        let rememberedBefore = world.rememberedRecordsUsed
        let statementsBefore = await world.serverStatements()
        let start = clock()
        let executor = world.taskExecutor
        let expected: Int
        if callers == 1 {
            // On the calling task itself: no task group, whose thread switching valgrind cannot follow.
            expected = await withTaskExecutorPreference(executor) {
                await work.perform(0..<count, on: engine)
            }
        } else {
            let share = (count + callers - 1) / callers
            expected = await withTaskGroup(of: Int.self) { group in
                for first in stride(from: 0, to: count, by: share) {
                    group.addTask(executorPreference: executor) {
                        await work.perform(first..<min(count, first + share), on: engine)
                    }
                }
                return await group.reduce(0, +)
            }
        }
        let elapsed = Double(clock() - start) / 1_000
        guard expected == count else {
            throw BenchmarkFailure(operation: operation, expected: count, answered: expected)
        }
        let statementsAfter = await world.serverStatements()
        func perOperation(_ before: Int?, _ after: Int?) -> Double? {
            guard let before, let after else { return nil }
            return Double(after - before) / Double(count)
        }
        return Sample(
            microseconds: elapsed / Double(count) * Double(callers),
            roundTrips: perOperation(roundTripsBefore, world.roundTrips),
            remembered: perOperation(rememberedBefore, world.rememberedRecordsUsed),
            statements: perOperation(statementsBefore, statementsAfter)
        )
    }
}

/// The inputs of one run, prepared untimed: what the timed loop hands the engine, one by one. The loop
/// calls the engine itself, as the peers' loops call their token endpoints on prepared bodies; a list of
/// closures, each capturing the engine and its input, added a call through a closure, a copy of the
/// engine and a retain of the closure's context to every operation timed (4–8 % of an operation at
/// 10³ grants, measured side by side: `Docs/Performance.md`, "Method").
///
/// Every answer is checked as the peers check theirs: ``perform(_:on:)`` counts the answers the
/// operation must give, and a run that gets fewer fails instead of reporting the speed of refusals.
private enum PreparedWork: Sendable {
    /// Requests to the endpoint, each to be answered with `status`.
    case requests([EndpointRequest], answered: Int)
    /// `Cookie` fields, each naming a live session.
    case sessionChecks([HeaderFields])
    /// `Authorization` fields, each carrying a live access token.
    case bearerChecks([HeaderFields])

    /// Handles the inputs in `range`; returns how many got the answer they must get.
    func perform(_ range: Range<Int>, on engine: AuthEngine) async -> Int {
        var expected = 0
        switch self {
        case .requests(let requests, let status):
            for index in range where await engine.handle(request: requests[index]).status == status {
                expected += 1
            }
        case .sessionChecks(let headers):
            for index in range {
                if case .authenticated = try? await engine.authenticateSession(headers: headers[index]) {
                    expected += 1
                }
            }
        case .bearerChecks(let headers):
            for index in range {
                if case .authenticated = try? await engine.authenticateBearer(headers: headers[index]) {
                    expected += 1
                }
            }
        }
        return expected
    }
}

/// A run whose operations did not all get the answer they must: a benchmark of the wrong work.
struct BenchmarkFailure: Error, CustomStringConvertible {
    var operation: BenchmarkOperation
    var expected: Int
    var answered: Int

    var description: String {
        "\(operation.rawValue): \(answered) of \(expected) operations got the answer they must"
    }
}
