// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Synchronization
import Testing
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuthPostgres

/// The executor whose threads wait for PostgreSQL in place, on its own and under the store.
@Suite(.timeLimit(.minutes(1)))
struct PostgresTaskExecutorTests {
    /// Jobs that block their thread for a while and report whether they ran on an executor thread,
    /// and how many ran at once at most.
    private final class BlockingJobs: Sendable {
        let running = Atomic(0)
        let mostAtOnce = Atomic(0)
        let onExecutorThread = Atomic(0)

        func run() {
            if PostgresTaskExecutor.current != nil {
                onExecutorThread.add(1, ordering: .relaxed)
            }
            let now = running.add(1, ordering: .relaxed).newValue
            var seen = mostAtOnce.load(ordering: .relaxed)
            while now > seen {
                let (exchanged, original) = mostAtOnce.compareExchange(
                    expected: seen,
                    desired: now,
                    ordering: .relaxed
                )
                if exchanged { break }
                seen = original
            }
            usleep(20_000)  // blocks the thread, as a libpq call does
            running.subtract(1, ordering: .relaxed)
        }
    }

    @Test("Tasks that prefer the executor run on its threads, at most maximumThreads at once, in parallel")
    func boundedParallelThreads() async {
        let executor = PostgresTaskExecutor(maximumThreads: 3)
        let jobs = BlockingJobs()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<24 {
                group.addTask(executorPreference: executor) { jobs.run() }
            }
        }
        #expect(jobs.onExecutorThread.load(ordering: .relaxed) == 24)
        #expect(jobs.mostAtOnce.load(ordering: .relaxed) <= 3)
        // Blocking jobs do not hold one another up while a thread is free to start.
        #expect(jobs.mostAtOnce.load(ordering: .relaxed) >= 2)
        #expect(executor.threadCount <= 3)
        #expect(!(PostgresTaskExecutor.current != nil))
    }

    @Test("Idle threads end after idleTimeout, and a later job starts one again")
    func idleThreadsEnd() async throws {
        let executor = PostgresTaskExecutor(maximumThreads: 2, idleTimeout: 0.1)
        let jobs = BlockingJobs()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask(executorPreference: executor) { jobs.run() }
            }
        }
        #expect(jobs.onExecutorThread.load(ordering: .relaxed) == 4)
        for _ in 0..<100 where executor.threadCount > 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(executor.threadCount == 0)
        let ranOnExecutor = await Task(executorPreference: executor) {
            (PostgresTaskExecutor.current != nil)
        }.value
        #expect(ranOnExecutor)
    }
}

extension PostgresTaskExecutorTests {
    @Test("An idle thread is woken for a job at once, not when its idle timeout ends")
    func idleThreadIsWoken() async throws {
        let executor = PostgresTaskExecutor(maximumThreads: 2, idleTimeout: 5)
        _ = await Task(executorPreference: executor) { 1 }.value
        // The thread is idle now, waiting for a job or its timeout.
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        _ = await Task(executorPreference: executor) { 2 }.value
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(executor.threadCount == 1)
    }

    @Test("Two jobs arriving together for one idle thread: one wakes it, the other starts a second")
    func arrivalsDoNotQueueBehindOneIdleThread() async throws {
        let executor = PostgresTaskExecutor(maximumThreads: 3, idleTimeout: 5)
        _ = await Task(executorPreference: executor) { 1 }.value
        try await Task.sleep(for: .milliseconds(50))
        let jobs = BlockingJobs()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask(executorPreference: executor) { jobs.run() }
            }
        }
        // Had the second counted the thread the first had claimed as still idle, it would have waited
        // for it instead of starting another, and the two would have run one after the other.
        #expect(jobs.mostAtOnce.load(ordering: .relaxed) == 2)
    }

    @Test("At most maximumThreads − 1 blocking calls at once: one thread is always left for the rest")
    func oneThreadNeverBlocks() {
        let executor = PostgresTaskExecutor(maximumThreads: 3)
        #expect(executor.beginBlocking())
        #expect(executor.beginBlocking())
        #expect(!executor.beginBlocking())
        executor.endBlocking()
        #expect(executor.beginBlocking())
    }

    @Test("When no thread can be started, jobs arriving together — each task suspending again and again — all finish")
    func refusedStartsStrandNoJob() async throws {
        for _ in 0..<20 {
            let executor = PostgresTaskExecutor(maximumThreads: 2, refusesThreads: true)
            let finished = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask(executorPreference: executor) {
                        for _ in 0..<20 { await Task.yield() }
                        return 1
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(finished == 8)
        }
    }

    @Test("When no thread can be started, jobs still run, on dispatch's threads")
    func refusedThreadsStillRunJobs() async {
        let executor = PostgresTaskExecutor(maximumThreads: 2, refusesThreads: true)
        let results = await withTaskGroup(of: Int.self) { group in
            for value in 0..<10 {
                group.addTask(executorPreference: executor) { value }
            }
            return await group.reduce(0, +)
        }
        #expect(results == 45)
        #expect(executor.threadCount == 0)
    }
}

/// The store's executor with a server: statements run in place, every bound still holds, and the
/// single-use guarantees are the same.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresTaskExecutorServerTests {
    @Test("On the store's executor a code exchange runs every statement, the limiter's too, in place; elsewhere none")
    func exchangeRunsInPlace() async throws {
        let instances = try await PostgresConcurrencyTests.Instances(count: 1)
        let store = instances.stores[0]
        defer { store.close() }
        let limiter = PostgresRateLimiter(configuration: store.configuration)
        defer { limiter.close() }
        let engine = try AuthEngine(
            store: store,
            accounts: InMemoryAccountDirectory(activeAccounts: [PostgresConcurrencyTests.account]),
            rateLimiter: limiter
        )

        let (code, verifier) = try await PostgresConcurrencyTests.issueCode(instances)
        let before = (store.statistics.operationsInPlace, limiter.statistics.operationsInPlace)
        let request = PostgresConcurrencyTests.exchange(code: code, verifier: verifier)
        let response = await withTaskExecutorPreference(store.taskExecutor) {
            await engine.handle(request: request)
        }
        #expect(response.status == 200)
        // The redemption — the store remembers the code it inserted, so there is no lookup — and the
        // admission on the limiter's own pool.
        #expect(store.statistics.rememberedRecordsUsed == 1)
        #expect(store.statistics.operationsInPlace - before.0 == 1)
        #expect(limiter.statistics.operationsInPlace - before.1 == 1)

        let (other, otherVerifier) = try await PostgresConcurrencyTests.issueCode(instances)
        let handedOff = await engine.handle(
            request: PostgresConcurrencyTests.exchange(code: other, verifier: otherVerifier)
        )
        #expect(handedOff.status == 200)
        #expect(store.statistics.operationsInPlace - before.0 == 1)
        #expect(limiter.statistics.operationsInPlace - before.1 == 1)
    }

    @Test("30 exchanges of one code through three instances, each on its store's executor: exactly one succeeds")
    func raceOnExecutors() async throws {
        let instances = try await PostgresConcurrencyTests.Instances(count: 3)
        defer { instances.stores.forEach { $0.close() } }
        let (code, verifier) = try await PostgresConcurrencyTests.issueCode(instances)
        let request = PostgresConcurrencyTests.exchange(code: code, verifier: verifier)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for index in 0..<30 {
                let engine = instances.engines[index % 3]
                let executor = instances.stores[index % 3].taskExecutor
                group.addTask(executorPreference: executor) { await engine.handle(request: request).status }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 400 }, "\(statuses)")
        #expect(instances.stores.map(\.statistics.operationsInPlace).reduce(0, +) >= 30)
    }

    /// What `body` ended with: "ok", or the error's kind.
    private static func outcome(_ body: () async throws -> Void) async -> String {
        do {
            try await body()
            return "ok"
        } catch let error as PostgresError {
            return "\(error.kind)"
        } catch {
            return "\(type(of: error))"
        }
    }

    @Test(
        "On the executor, a caller in line for the one busy connection still gets poolTimeout on time",
        arguments: [false, true]
    )
    func connectionWaitIsBounded(cancelled: Bool) async throws {
        let store = try await PostgresTimeoutTests.makeStore(
            maximumConnections: 1,
            connectionWaitTimeout: cancelled ? .seconds(60) : .milliseconds(300),
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        defer { store.close() }
        let executor = store.taskExecutor
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holder = Task(executorPreference: executor) { try await store.execute(script: latch.holdingScript()) }
        try await latch.waitUntilHeld(schema: store.configuration.schema)
        // The holder blocks the executor's one blocking place until the latch opens, which is only once the
        // waiter has its answer: the waiter's timeout or cancellation ran on the thread that never blocks.
        // Had it waited for the holder instead, it would have waited until the latch's limit (20 s) ended
        // the hold, and then read "ok".
        let (result, waited) = try await latch.whileClosed {
            let started = ContinuousClock.now
            let waiter = Task(executorPreference: executor) {
                await Self.outcome { _ = try await store.grant(PostgresTimeoutTests.unknownGrant) }
            }
            if cancelled {
                try await Task.sleep(for: .milliseconds(100))
                waiter.cancel()
            }
            return (await waiter.value, ContinuousClock.now - started)
        }
        try await holder.value
        #expect(result == (cancelled ? "CancellationError" : "poolTimeout"))
        // On time, give or take a loaded machine's delays (1.6–1.9 s for 300 ms under ThreadSanitizer in CI).
        #expect(waited < .seconds(5), "waited \(waited)")
    }

    @Test("A statement of another pool on the same executor cannot take its last thread from a caller in line")
    func otherPoolLeavesAThreadFree() async throws {
        // The store has one connection and so two threads; the second pool stands for a
        // PostgresRateLimiter's, whose statements run on the same request threads.
        let store = try await PostgresTimeoutTests.makeStore(
            maximumConnections: 1,
            connectionWaitTimeout: .milliseconds(300),
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        defer { store.close() }
        let other = try await PostgresTimeoutTests.makeStore(statementTimeout: PostgresLatch.holdingStatementTimeout)
        defer { other.close() }
        let executor = store.taskExecutor
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holders = [
            Task(executorPreference: executor) { try await store.execute(script: latch.holdingScript()) },
            Task(executorPreference: executor) { try await other.execute(script: latch.holdingScript()) },
        ]
        try await latch.waitUntilHeld(schema: store.configuration.schema)
        try await latch.waitUntilHeld(schema: other.configuration.schema)
        // Both holds last until the caller has its answer. Had they blocked the executor's two threads, the
        // caller's timeout would have waited for one of them: until the latch's limit, then "ok".
        let (result, waited) = try await latch.whileClosed {
            let started = ContinuousClock.now
            let result = await Task(executorPreference: executor) {
                await Self.outcome { _ = try await store.grant(PostgresTimeoutTests.unknownGrant) }
            }.value
            return (result, ContinuousClock.now - started)
        }
        for holder in holders { try await holder.value }
        #expect(result == "poolTimeout")
        #expect(waited < .seconds(5), "waited \(waited)")
    }

    @Test("On the executor, eight slow operations through one connection: the ones kept waiting are shed on time")
    func backlogIsShed() async throws {
        let store = try await PostgresTimeoutTests.makeStore(
            maximumConnections: 1,
            connectionWaitTimeout: .seconds(2),
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        defer { store.close() }
        let executor = store.taskExecutor
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let started = ContinuousClock.now
        // One of the eight gets the connection and holds it until the other seven have their answers: each
        // of them must give up on its own, none can be served by a connection come free.
        let results = try await latch.whileClosed {
            try await withThrowingTaskGroup(of: (String, Duration).self) { group in
                for _ in 0..<8 {
                    group.addTask(executorPreference: executor) {
                        let result = await Self.outcome { try await store.execute(script: latch.holdingScript()) }
                        return (result, ContinuousClock.now - started)
                    }
                }
                var results: [(String, Duration)] = []
                for try await result in group {
                    results.append(result)
                    if results.count == 7 { try await latch.open() }
                }
                return results
            }
        }
        #expect(results.filter { $0.0 == "ok" }.count == 1, "\(results)")
        #expect(results.filter { $0.0 == "poolTimeout" }.count == 7, "\(results)")
        // Each of the seven within its 2 s wait, give or take a loaded machine's delays: shed one after
        // another, the second would have been answered at 4 s and the last at 14 s.
        #expect(results.filter { $0.0 == "poolTimeout" }.allSatisfy { $0.1 < .seconds(4) }, "\(results)")
    }

    @Test("On the executor, a server that cannot be reached answers every caller within connectionWaitTimeout")
    func unreachableServerIsBounded() async throws {
        let store = PostgresGrantStore(
            clients: PostgresTimeoutTests.clients,
            configuration: try PostgresConfiguration(
                databaseURL: "postgresql:///tilecast?host=/nonexistent-tilecast-socket-directory",
                maximumConnections: 1,
                connectionWaitTimeout: .seconds(2)
            )
        )
        defer { store.close() }
        let started = ContinuousClock.now
        let waits = await withTaskGroup(of: Duration.self) { group in
            for _ in 0..<6 {
                group.addTask(executorPreference: store.taskExecutor) {
                    _ = try? await store.grant(PostgresTimeoutTests.unknownGrant)
                    return ContinuousClock.now - started
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Off the executor every caller is answered at about 2 s; on it, they must not be answered one
        // connection wait after another (2, 4, … 12 s). Waits of 2 s leave a loaded machine 4 s of delays
        // before the bound; with 0.5 s waits and a 1.5 s bound, it had 1 s.
        #expect(waits.allSatisfy { $0 < .seconds(6) }, "\(waits)")
    }

    @Test("While every executor thread waits on the server, tasks elsewhere and timers go on")
    func blockedExecutorHoldsNothingElse() async throws {
        let store = try await PostgresTimeoutTests.makeStore(
            maximumConnections: 2,
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        defer { store.close() }
        let executor = store.taskExecutor
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let sleepers = (0..<2).map { _ in
            Task(executorPreference: executor) { try await store.execute(script: latch.holdingScript()) }
        }
        try await latch.waitUntilHeld(schema: store.configuration.schema, count: 2)
        // Both executor threads stay blocked until the latch opens, after this timer and task: had either
        // waited for an executor thread, it would have waited until the latch's limit (20 s).
        try await latch.whileClosed {
            let started = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(20))
            let elsewhere = await Task { 6 * 7 }.value
            #expect(elsewhere == 42)
            #expect(ContinuousClock.now - started < .seconds(5))
        }
        for sleeper in sleepers { try await sleeper.value }
        #expect(store.statistics.operationsInPlace == 2)
    }
}
#endif
