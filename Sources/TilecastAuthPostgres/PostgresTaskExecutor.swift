// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads on which a request may wait for PostgreSQL in place: a task executor (SE-0417) whose threads
/// are the store's, not the Swift runtime's.
///
/// libpq waits for the server by blocking its thread, which the tasks of Swift's cooperative pool must
/// never do. So a statement sent from a task is handed to a thread of its own and its answer handed back:
/// two thread hand-offs per round trip, each a sleep and a wake, and on a machine of two cores those
/// switches are most of the process's own time for an operation (51 % of its samples in
/// `finish_task_switch` in a profile of a code exchange). A request that runs on this executor instead
/// — the server wraps its handling in `withTaskExecutorPreference(store.taskExecutor) { … }` — keeps one
/// of these threads while it runs, and ``PostgresConnectionPool`` calls libpq on it directly: the
/// thread blocks while the server works, and nothing else has to wake.
///
/// **One thread is always kept for work that does not block.** Of `maximumThreads`, at most
/// `maximumThreads − 1` may be inside a blocking call at once (``beginBlocking()``); a statement that finds
/// them all taken is handed to a thread of its own, as off the executor. So the jobs that end waits — a
/// connection handed to a caller in line, the pool's timeout, a cancellation — and new requests always
/// find a thread that will take them up promptly, and every bound of the pool holds as it does elsewhere.
///
/// Threads start when a job arrives and none is idle, up to `maximumThreads`; beyond that, jobs wait in
/// line, first come first served. A thread idle for `idleTimeout` ends, so a store that goes quiet — or a
/// test's store that is gone — keeps none. When a thread cannot be started (the process is at its
/// thread limit), the job that asked for it runs on a dispatch thread instead, so no job waits for a
/// thread that will never come.
final class PostgresTaskExecutor: TaskExecutor, @unchecked Sendable {
    /// Guards everything below; signalled when a job arrives for an idle thread.
    private let condition = NSCondition()
    /// The jobs in line: `jobs[head...]`.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var threads = 0
    /// Threads waiting for a job that no arrival has yet claimed.
    private var idle = 0
    /// Arrivals that claimed an idle thread and signalled it, not yet taken up by a woken thread.
    private var wakeups = 0
    /// Threads inside a blocking call (``beginBlocking()``).
    private var blocking = 0
    private let maximumThreads: Int
    private let idleTimeout: TimeInterval

    /// The name of the executor's threads, as `ps`, `top` and debuggers show it (at most 15 bytes).
    static let threadName = "tilecast-pgexec"

    /// Whether starting a thread is refused, as at the process's thread limit (for tests).
    private let refusesThreads: Bool

    /// An executor of up to `maximumThreads` threads, at least 2: one of them never blocks.
    init(maximumThreads: Int, idleTimeout: TimeInterval = 10, refusesThreads: Bool = false) {
        precondition(maximumThreads >= 2, "an executor needs a thread to block and one that never does")
        self.maximumThreads = maximumThreads
        self.idleTimeout = idleTimeout
        self.refusesThreads = refusesThreads
    }

    /// The executor whose thread is calling, if it is one of a `PostgresTaskExecutor`'s.
    static var current: PostgresTaskExecutor? {
        pthread_getspecific(executorThreadKey).map {
            Unmanaged<PostgresTaskExecutor>.fromOpaque($0).takeUnretainedValue()
        }
    }

    /// Threads running now, for tests.
    var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    /// Claims one of the `maximumThreads − 1` places for a call that blocks its thread; `false` when they
    /// are all taken, and the call must be made elsewhere. Each `true` is ended by ``endBlocking()``.
    func beginBlocking() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard blocking < maximumThreads - 1 else { return false }
        blocking += 1
        return true
    }

    /// Ends a blocking call that ``beginBlocking()`` allowed.
    func endBlocking() {
        condition.lock()
        blocking -= 1
        condition.unlock()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        var startsThread = false
        if idle > 0 {
            // One idle thread is this job's: counted off now, so that the next arrival, coming before it
            // wakes, starts or wakes another instead of waiting behind this one.
            idle -= 1
            wakeups += 1
            condition.signal()
        } else if threads < maximumThreads {
            threads += 1
            startsThread = true
        }
        condition.unlock()
        if startsThread && !startThread() {
            condition.lock()
            threads -= 1
            condition.unlock()
            // The line has a job with no thread coming for it — this one, and any that arrived while
            // the start was counted: run the line on a dispatch thread until it is empty.
            DispatchQueue.global().async { self.runJobsWithoutThread() }
        }
    }

    /// Starts a thread that runs `work()`; `false` when the system refuses one.
    private func startThread() -> Bool {
        if refusesThreads {
            // As a failing pthread_create takes a while (a stack mapped and unmapped), so that arrivals
            // can come while the start is still counted.
            usleep(300)
            return false
        }
        let executor = Unmanaged.passRetained(self)
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread: pthread_t = 0
        #endif
        let status = pthread_create(
            &thread,
            nil,
            { argument in
                let executor = Unmanaged<PostgresTaskExecutor>.fromOpaque(argument!).takeRetainedValue()
                executor.work()
                return nil
            },
            executor.toOpaque()
        )
        if status != 0 {
            executor.release()
            return false
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
        return true
    }

    /// Runs the jobs in line until there are none, on the calling thread (not an executor thread: its
    /// statements are handed off as elsewhere, so it never blocks). Jobs that arrive while a refused
    /// start was still counted expect a thread that does not exist; this is where they run.
    private func runJobsWithoutThread() {
        while true {
            condition.lock()
            let job = takeJob()
            condition.unlock()
            guard let job else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The job at the head of the line, taken off it; the caller holds the lock.
    private func takeJob() -> UnownedJob? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= jobs.count {
            // A long backlog: drop the taken part instead of keeping it until the line empties.
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    /// A thread's life: run jobs while there are any; end after `idleTimeout` without one.
    private func work() {
        Thread.current.name = Self.threadName
        pthread_setspecific(executorThreadKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(executorThreadKey, nil) }
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            if let job = takeJob() {
                condition.unlock()
                job.runSynchronously(on: executor)
                condition.lock()
                continue
            }
            idle += 1
            let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout))
            if wakeups > 0 {
                // Claimed by an arrival (whether or not this wake was the one it signalled).
                wakeups -= 1
            } else {
                // A timeout or a spurious wake: still counted idle, so leave the count.
                idle -= 1
                if !signalled && head == jobs.count {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
        }
    }
}

/// The thread-specific key that holds, on each executor thread, its executor (unretained: the thread
/// keeps it alive).
private let executorThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
#endif
