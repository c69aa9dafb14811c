// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
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
/// Threads start when a job arrives and none is idle, up to `maximumThreads`; beyond that, jobs wait
/// in line, first come first served. A thread idle for `idleTimeout` ends, so a store that goes quiet —
/// or a test's store that is gone — keeps none.
final class PostgresTaskExecutor: TaskExecutor, @unchecked Sendable {
    /// Guards `jobs`, `head`, `threads` and `idle`; signalled when a job arrives.
    private let condition = NSCondition()
    /// The jobs in line: `jobs[head...]`.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var threads = 0
    /// Threads waiting for a job that no arrival has yet claimed.
    private var idle = 0
    /// Arrivals that claimed an idle thread and signalled it, not yet taken up by a woken thread.
    private var wakeups = 0
    private let maximumThreads: Int
    private let idleTimeout: TimeInterval

    /// The label of the executor's threads, as thread names and debuggers show it.
    static let threadName = "tilecast-postgres-executor"

    init(maximumThreads: Int, idleTimeout: TimeInterval = 10) {
        precondition(maximumThreads >= 1, "an executor needs a thread")
        self.maximumThreads = maximumThreads
        self.idleTimeout = idleTimeout
    }

    /// Whether the calling thread is one of any `PostgresTaskExecutor`'s, where blocking on libpq is
    /// what the thread is for.
    static var isCurrentThreadAnExecutorThread: Bool {
        pthread_getspecific(executorThreadKey) != nil
    }

    /// Threads running now, for tests.
    var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
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
        if startsThread {
            let thread = Thread { [self] in work() }
            thread.name = Self.threadName
            thread.start()
        }
    }

    /// A thread's life: run jobs while there are any; end after `idleTimeout` without one.
    private func work() {
        pthread_setspecific(executorThreadKey, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(executorThreadKey, nil) }
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                if head == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    head = 0
                }
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

/// The thread-specific key whose value is set — to any pointer but `nil` — on every executor thread.
private let executorThreadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
#endif
