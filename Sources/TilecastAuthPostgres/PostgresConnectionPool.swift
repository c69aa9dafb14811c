// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Dispatch
import Foundation
import TilecastAuth

/// A bounded pool of libpq connections: at most ``PostgresConfiguration/maximumConnections`` open, one
/// operation on each at a time, callers beyond the bound waiting their turn in order — for at most
/// ``PostgresConfiguration/connectionWaitTimeout``, or until their task is cancelled.
///
/// Connections open lazily. One found closed before use — the server restarted, an administrator
/// terminated its backend — is replaced before anything is sent, which is always safe. One lost during
/// a statement is dropped; the operation is retried on a fresh connection only when it is a read, since
/// a write's commit may or may not have reached the server.
///
/// A connection that cannot be opened — the server is down, starting up (57P03), shutting down
/// (57P01), or full (53300, "too many clients") — is a temporary condition, not the caller's failure.
/// The caller keeps waiting, within ``PostgresConfiguration/connectionWaitTimeout``, for whichever comes
/// first: a connection another operation releases, or a retried connect. Retries are the pool's, one at
/// a time, with jittered exponential backoff (25 ms doubling to 2 s), so a thousand waiting callers make
/// a handful of attempts a second, not a thousand.
final class PostgresConnectionPool: Sendable {
    private enum Lease {
        case existing(PostgresConnection)
        case new
    }

    /// A caller waiting for a connection; the number lets a timeout or a cancellation find it.
    private struct Waiter {
        var number: UInt64
        var continuation: CheckedContinuation<Lease, any Error>
    }

    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var waiters: [Waiter] = []
        var waitersEverQueued: UInt64 = 0
        var closed = false
        var roundTrips = 0
        var connectionsOpened = 0
        var connectionsRefused = 0
        /// Operations run on the calling thread, a task executor's, rather than handed to a queue.
        var operationsInPlace = 0
        /// Transactions run again after a serialization failure or a deadlock.
        var transientRetries = 0
        /// While connects fail: the current backoff, the instant before which none is tried, and whether
        /// one is being tried now.
        var backoff: Duration = .zero
        var connectBlockedUntil: ContinuousClock.Instant?
        var connectInFlight = false
        /// Callers holding an empty slot while connects fail, polling for a released connection; a
        /// released connection goes to them before the line in ``acquire()``, which waits for a slot.
        var pollers = 0
    }

    /// The label of the queues operations run on, as thread names and debuggers show it.
    static let queueLabel = "tilecast-postgres"

    let configuration: PostgresConfiguration
    private let state = LockedValue(State())

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    /// Round trips made so far, over every connection.
    var roundTrips: Int { state.withLock { $0.roundTrips } }

    /// Connections opened so far, replacements included.
    var connectionsOpened: Int { state.withLock { $0.connectionsOpened } }

    /// Transactions run again so far after a serialization failure or a deadlock.
    var transientRetries: Int { state.withLock { $0.transientRetries } }

    /// Attempts to open a connection that failed.
    var connectionsRefused: Int { state.withLock { $0.connectionsRefused } }

    /// Operations that ran on the calling thread because it was a ``PostgresTaskExecutor``'s.
    var operationsInPlace: Int { state.withLock { $0.operationsInPlace } }

    /// Runs `body` with a connection of its own, on a thread where blocking harms nothing else.
    ///
    /// - Parameters:
    ///   - idempotent: Whether `body` may run twice: a read, or a write whose repetition changes nothing.
    ///     A connection lost during it is then retried once on a fresh one. A serialization failure or
    ///     deadlock is retried — twice at most — for any body, since its transaction rolled back. A
    ///     connection that cannot be opened is not retried.
    ///   - maintenance: Whether this is a maintenance operation exempt from the statement timeout; its
    ///     client-side deadline is then ten minutes instead of ``PostgresConfiguration/operationTimeout``.
    func withConnection<Value: Sendable>(
        idempotent: Bool,
        maintenance: Bool = false,
        _ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> Value
    ) async throws -> Value {
        // The wait for a connection — in line, or for a connect while the server refuses — is bounded
        // once, from here, by connectionWaitTimeout.
        let connectDeadline = ContinuousClock.now.advanced(by: configuration.connectionWaitTimeout)
        let lease = try await acquire()
        if let executor = PostgresTaskExecutor.current, executor.beginBlocking() {
            // A thread that is there to wait for PostgreSQL (the request runs on a store's task
            // executor), and not its last one free: libpq is called right here, with no hand-off to
            // another thread and back.
            defer { executor.endBlocking() }
            state.withLock { $0.operationsInPlace += 1 }
            return try run(
                lease,
                idempotent: idempotent,
                maintenance: maintenance,
                connectDeadline: connectDeadline,
                body
            ).get()
        }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            // A serial queue of its own, not a global one: libdispatch runs serial queues on its
            // overcommit threads, one more whenever none is free, where the global queues have about one
            // thread per core — which a few libpq calls waiting on a slow server would hold, and with
            // them every task and timer of the process. At most maximumConnections calls block at once.
            DispatchQueue(label: Self.queueLabel).async {
                continuation.resume(
                    with: self.run(
                        lease,
                        idempotent: idempotent,
                        maintenance: maintenance,
                        connectDeadline: connectDeadline,
                        body
                    )
                )
            }
        }
    }

    /// The value of the server setting `name` on one of this pool's connections (for tests).
    func sessionSetting(_ name: String) async throws -> String {
        let statement = PostgresStatement(name: "tilecast_current_setting", sql: "SELECT current_setting($1)")
        return try await withConnection(idempotent: true) { connection throws(PostgresError) -> String in
            try connection.execute(statement, [.text(name)]).row(0).text(0)
        }
    }

    /// Closes idle connections and refuses new operations; operations under way finish.
    func close() {
        let waiters = state.withLock { state -> [Waiter] in
            state.closed = true
            state.open -= state.idle.count
            state.idle = []
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: PostgresError.unavailable(.closed, message: "the store was closed"))
        }
    }

    // MARK: Leasing

    /// A connection, or a slot to open one in: at once when one is free, else after waiting in line.
    ///
    /// A wait ends with ``PostgresError/Kind/poolTimeout`` after
    /// ``PostgresConfiguration/connectionWaitTimeout``, and with `CancellationError` when the caller's
    /// task is cancelled. Whichever of a hand-off, the timeout and the cancellation comes first removes
    /// the waiter under the lock, so exactly one of them resumes it.
    private func acquire() async throws -> Lease {
        let number = state.withLock { state in
            state.waitersEverQueued &+= 1
            return state.waitersEverQueued
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, any Error>) in
                let immediate = state.withLock { state -> Result<Lease, any Error>? in
                    if state.closed {
                        return .failure(PostgresError.unavailable(.closed, message: "the store was closed"))
                    }
                    if let connection = state.idle.popLast() {
                        return .success(.existing(connection))
                    }
                    if state.open < configuration.maximumConnections {
                        state.open += 1
                        return .success(.new)
                    }
                    // Checked under the lock: a cancellation that comes later finds the waiter queued.
                    if Task.isCancelled {
                        return .failure(CancellationError())
                    }
                    state.waiters.append(Waiter(number: number, continuation: continuation))
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                let timeout = configuration.connectionWaitTimeout
                let message =
                    "no connection came free within \(timeout) (maximumConnections: \(configuration.maximumConnections))"
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) {
                    self.abandonWait(number, with: PostgresError.unavailable(.poolTimeout, message: message))
                }
            }
        } onCancel: {
            abandonWait(number, with: CancellationError())
        }
    }

    /// Ends the wait of waiter `number` with `error`, if it is still waiting.
    private func abandonWait(_ number: UInt64, with error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.number == number }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// Gives a connection back, or its slot when the connection is gone, to the first waiter or the
    /// idle list.
    private func release(_ connection: PostgresConnection?, roundTrips: Int) {
        let handOff = state.withLock { state -> (Waiter, Lease)? in
            state.roundTrips += roundTrips
            guard !state.closed else {
                state.open -= 1
                return nil
            }
            if let connection {
                if state.pollers == 0, !state.waiters.isEmpty {
                    return (state.waiters.removeFirst(), .existing(connection))
                }
                state.idle.append(connection)
                return nil
            }
            if !state.waiters.isEmpty {
                return (state.waiters.removeFirst(), .new)
            }
            state.open -= 1
            return nil
        }
        if let (waiter, lease) = handOff {
            waiter.continuation.resume(returning: lease)
        }
    }

    // MARK: Running

    private func run<Value>(
        _ lease: Lease,
        idempotent: Bool,
        maintenance: Bool,
        connectDeadline: ContinuousClock.Instant,
        _ body: (PostgresConnection) throws(PostgresError) -> Value
    ) -> Result<Value, any Error> {
        // The operation's deadline starts once it has a connection: time spent waiting for one is
        // connectionWaitTimeout's, and a statement is never sent with its deadline already gone.
        var deadline: ContinuousClock.Instant?
        var connection: PostgresConnection?
        if case .existing(let existing) = lease {
            connection = existing
        }
        var roundTrips = 0
        defer { release(connection, roundTrips: roundTrips) }
        var transientRetriesLeft = 2
        var lostConnectionRetries = idempotent ? 1 : 0
        var sent = false
        while true {
            let current: PostgresConnection
            do throws(PostgresError) {
                current = try usable(connection, until: connectDeadline)
            } catch {
                connection = nil
                // No connection within the wait: the backend was unavailable to this operation, unless
                // an earlier attempt of it was sent.
                var failure = error
                failure.backendWasUnavailable = !sent
                return .failure(failure)
            }
            connection = current
            let operationDeadline =
                deadline
                ?? ContinuousClock.now.advanced(
                    by: maintenance ? PostgresConfiguration.maintenanceTimeout : configuration.operationTimeout
                )
            deadline = operationDeadline
            guard ContinuousClock.now < operationDeadline else {
                // A retry whose deadline has passed: nothing of it was sent.
                return .failure(PostgresError(.timeout, message: "the operation's deadline passed before a retry"))
            }
            current.deadline = operationDeadline
            let before = current.roundTrips
            sent = true
            do throws(PostgresError) {
                let value = try body(current)
                roundTrips += current.roundTrips - before
                return .success(value)
            } catch {
                roundTrips += current.roundTrips - before
                let lost = error.kind == .connection || !current.isUsable
                if lost {
                    connection = nil
                }
                if error.kind == .timeout {
                    // The deadline is the operation's: no retry may extend it.
                    return .failure(error)
                }
                if error.isTransient && transientRetriesLeft > 0 {
                    transientRetriesLeft -= 1
                    state.withLock { $0.transientRetries += 1 }
                } else if lost && lostConnectionRetries > 0 {
                    lostConnectionRetries -= 1
                } else {
                    return .failure(error)
                }
            }
        }
    }

    /// `connection` if it can take a statement; else, in its place, a connection another operation
    /// released or a freshly opened one — before anything is sent, so replacing it is always safe. While
    /// connects fail, it waits for either until `deadline`, trying a connect only when the backoff allows
    /// and no other caller is trying one.
    private func usable(
        _ connection: PostgresConnection?,
        until deadline: ContinuousClock.Instant
    ) throws(PostgresError) -> PostgresConnection {
        if let connection, connection.isUsable {
            return connection
        }
        var lastFailure: PostgresError?
        var polling = false
        defer {
            if polling { state.withLock { $0.pollers -= 1 } }
        }
        while true {
            // A connection released by another operation: this caller's empty slot goes to the first
            // caller in line, or is given up.
            let taken = state.withLock { state -> (PostgresConnection?, Waiter?, closed: Bool) in
                if state.closed { return (nil, nil, true) }
                guard let idle = state.idle.popLast() else { return (nil, nil, false) }
                if !state.waiters.isEmpty {
                    return (idle, state.waiters.removeFirst(), false)
                }
                state.open -= 1
                return (idle, nil, false)
            }
            if taken.closed {
                throw PostgresError(.closed, message: "the store was closed")
            }
            taken.1?.continuation.resume(returning: .new)
            if let released = taken.0 {
                if released.isUsable { return released }
                continue  // gone too; its slot is this caller's now
            }
            if let claim = claimConnectAttempt() {
                do throws(PostgresError) {
                    let opened = try PostgresConnection.open(configuration)
                    state.withLock { state in
                        state.connectionsOpened += 1
                        state.backoff = .zero
                        state.connectBlockedUntil = nil
                        if claim == .exclusive { state.connectInFlight = false }
                    }
                    return opened
                } catch {
                    lastFailure = error
                    connectFailed(claim)
                }
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                let reason = lastFailure?.message ?? "other callers' attempts to connect are failing"
                throw PostgresError(
                    .connection,
                    message: "no connection within \(configuration.connectionWaitTimeout): \(reason)"
                )
            }
            if !polling {
                polling = true
                state.withLock { $0.pollers += 1 }
            }
            Thread.sleep(forTimeInterval: min(0.01, Double(remaining.wholeMillisecondsRoundedUp) / 1000))
        }
    }

    /// How a caller may try a connect: freely while connects succeed, or as the one caller trying after
    /// a failure.
    private enum ConnectClaim {
        case free
        case exclusive
    }

    /// Whether this caller may try to open a connection now: always while connects succeed; after a
    /// failure, once the backoff has passed, and only if no other caller is trying.
    private func claimConnectAttempt() -> ConnectClaim? {
        state.withLock { state in
            guard state.backoff > .zero else { return .free }
            if state.connectInFlight { return nil }
            if let until = state.connectBlockedUntil, ContinuousClock.now < until { return nil }
            state.connectInFlight = true
            return .exclusive
        }
    }

    /// Counts a failed connect and doubles the backoff (25 ms to 2 s), with jitter, so that instances
    /// waiting out the same outage do not retry in step.
    private func connectFailed(_ claim: ConnectClaim) {
        state.withLock { state in
            state.connectionsRefused += 1
            state.backoff = min(max(state.backoff * 2, .milliseconds(25)), .seconds(2))
            let jittered = state.backoff * Double.random(in: 0.5...1)
            state.connectBlockedUntil = ContinuousClock.now.advanced(by: jittered)
            if claim == .exclusive { state.connectInFlight = false }
        }
    }
}
#endif
