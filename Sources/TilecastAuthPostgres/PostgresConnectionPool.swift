// SPDX-License-Identifier: Apache-2.0

import Dispatch
import TilecastAuth

/// A bounded pool of libpq connections: at most ``PostgresConfiguration/maximumConnections`` open, one
/// operation on each at a time, callers beyond the bound waiting their turn in order.
///
/// Connections open lazily. One found closed before use — the server restarted, an administrator
/// terminated its backend — is replaced before anything is sent, which is always safe. One lost during
/// a statement is dropped; the operation is retried on a fresh connection only when it is a read, since
/// a write's commit may or may not have reached the server.
final class PostgresConnectionPool: Sendable {
    private enum Lease {
        case existing(PostgresConnection)
        case new
    }

    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var waiters: [CheckedContinuation<Lease, any Error>] = []
        var closed = false
        var roundTrips = 0
        var connectionsOpened = 0
    }

    let configuration: PostgresConfiguration
    private let state = LockedValue(State())

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    /// Round trips made so far, over every connection.
    var roundTrips: Int { state.withLock { $0.roundTrips } }

    /// Connections opened so far, replacements included.
    var connectionsOpened: Int { state.withLock { $0.connectionsOpened } }

    /// Runs `body` with a connection of its own, on a dispatch thread.
    ///
    /// - Parameters:
    ///   - idempotent: Whether `body` may run twice: a read, or a write whose repetition changes nothing.
    ///     A connection lost during it is then retried once on a fresh one. A serialization failure or
    ///     deadlock is retried — twice at most — for any body, since its transaction rolled back. A
    ///     connection that cannot be opened is not retried.
    func withConnection<Value: Sendable>(
        idempotent: Bool,
        _ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> Value
    ) async throws -> Value {
        let lease = try await acquire()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: self.run(lease, idempotent: idempotent, body))
            }
        }
    }

    /// Closes idle connections and refuses new operations; operations under way finish.
    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Lease, any Error>] in
            state.closed = true
            state.open -= state.idle.count
            state.idle = []
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.resume(throwing: PostgresError(.closed, message: "the store was closed"))
        }
    }

    // MARK: Leasing

    private func acquire() async throws -> Lease {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, any Error>) in
            let immediate = state.withLock { state -> Result<Lease, PostgresError>? in
                if state.closed {
                    return .failure(PostgresError(.closed, message: "the store was closed"))
                }
                if let connection = state.idle.popLast() {
                    return .success(.existing(connection))
                }
                if state.open < configuration.maximumConnections {
                    state.open += 1
                    return .success(.new)
                }
                state.waiters.append(continuation)
                return nil
            }
            if let immediate {
                continuation.resume(with: immediate.mapError { $0 as any Error })
            }
        }
    }

    /// Gives a connection back, or its slot when the connection is gone, to the first waiter or the
    /// idle list.
    private func release(_ connection: PostgresConnection?, roundTrips: Int) {
        let handOff = state.withLock { state -> (CheckedContinuation<Lease, any Error>, Lease)? in
            state.roundTrips += roundTrips
            guard !state.closed else {
                state.open -= 1
                return nil
            }
            if let connection {
                if !state.waiters.isEmpty {
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
            waiter.resume(returning: lease)
        }
    }

    // MARK: Running

    private func run<Value>(
        _ lease: Lease,
        idempotent: Bool,
        _ body: (PostgresConnection) throws(PostgresError) -> Value
    ) -> Result<Value, any Error> {
        var connection: PostgresConnection?
        if case .existing(let existing) = lease {
            connection = existing
        }
        var roundTrips = 0
        defer { release(connection, roundTrips: roundTrips) }
        var transientRetries = 2
        var lostConnectionRetries = idempotent ? 1 : 0
        while true {
            let current: PostgresConnection
            do throws(PostgresError) {
                current = try usable(connection)
            } catch {
                // Not retried: a server that cannot be reached within connectTimeout is answered now.
                connection = nil
                return .failure(error)
            }
            connection = current
            let before = current.roundTrips
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
                if error.isTransient && transientRetries > 0 {
                    transientRetries -= 1
                } else if lost && lostConnectionRetries > 0 {
                    lostConnectionRetries -= 1
                } else {
                    return .failure(error)
                }
            }
        }
    }

    /// `connection` if it can take a statement, else a freshly opened one in its place — before anything
    /// is sent, so replacing it is always safe.
    private func usable(_ connection: PostgresConnection?) throws(PostgresError) -> PostgresConnection {
        if let connection, connection.isUsable {
            return connection
        }
        let opened = try PostgresConnection.open(configuration)
        state.withLock { $0.connectionsOpened += 1 }
        return opened
    }
}
