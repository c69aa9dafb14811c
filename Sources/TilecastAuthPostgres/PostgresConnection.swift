// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import CLibPQ
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One libpq connection.
///
/// libpq's calls block, so ``PostgresConnectionPool`` runs them on serial dispatch queues — libdispatch's
/// overcommit threads — never on the global queues' or the Swift concurrency pool's. The pool hands a connection to one operation at a time, which is what makes the
/// unchecked `Sendable` sound: no two threads touch `handle` at once.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var prepared: Set<String> = []
    /// Requests sent to the server and answered: prepares and executions. For the benchmark.
    private(set) var roundTrips = 0
    /// When the operation under way must be over, by the client's clock: set by the pool before each
    /// operation. Past it, the statement is cancelled, the connection discarded, and the caller answered.
    var deadline = ContinuousClock.now.advanced(by: .seconds(3600))
    /// Set when a call ran past its deadline: what the server does with the connection is unknown, so it
    /// is never used again.
    private(set) var isAbandoned = false

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    /// Opens a connection. Blocks; call it where ``PostgresConnectionPool`` runs operations.
    ///
    /// The connection runs at READ COMMITTED whatever the server's `default_transaction_isolation`: every
    /// concurrency argument of the store rests on it (see `Docs/PostgreSQL.md`). Its `statement_timeout`
    /// is ``PostgresConfiguration/statementTimeout``.
    static func open(_ configuration: PostgresConfiguration) throws(PostgresError) -> PostgresConnection {
        // A URL libpq cannot parse is refused before connecting, with a message of our own: libpq's quotes
        // the offending part, which may be the password.
        guard isParsable(configuration.databaseURL) else {
            throw PostgresError(.connection, message: "the database URL is not a valid libpq connection string or URI")
        }
        // TCP keepalives and tcp_user_timeout (libpq ignores them on a Unix socket): a peer that vanishes —
        // a partition, a host that died — is noticed by the kernel within seconds, not hours.
        let keys = [
            "dbname", "connect_timeout", "application_name", "client_encoding", "keepalives", "keepalives_idle",
            "keepalives_interval", "keepalives_count", "tcp_user_timeout",
        ]
        // The schema in the application name tells an administrator (pg_stat_activity) which store a
        // connection belongs to.
        let values = [
            configuration.databaseURL, String(configuration.connectTimeout), "tilecast-auth/\(configuration.schema)",
            "UTF8", "1", "5", "2", "3",
            String(min(configuration.operationTimeout.wholeMillisecondsRoundedUp, Int(Int32.max))),
        ]
        // expand_dbname = 1: the first `dbname` may be a full connection string or URI.
        let handle = withCStrings(keys) { keyPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        guard let handle else { throw PostgresError(.connection, message: "libpq could not allocate a connection") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw PostgresError(.connection, message: Self.firstLine(message))
        }
        // Notices ("schema already exists, skipping") are not errors; libpq would print them to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // Non-blocking sends: every wait, writing included, is a poll with the deadline.
        PQsetnonblocking(handle, 1)
        let connection = PostgresConnection(handle: handle)
        connection.deadline = ContinuousClock.now.advanced(by: configuration.operationTimeout)
        try connection.execute(
            script: """
                SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED;
                SET statement_timeout = \(configuration.statementTimeoutMilliseconds)
                """
        )
        return connection
    }

    /// Whether libpq can parse `url` as a connection string or URI.
    private static func isParsable(_ url: String) -> Bool {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            if let error { PQfreemem(error) }
            return false
        }
        PQconninfoFree(options)
        return true
    }

    /// Whether the connection can take a statement: open, outside a transaction, and with nothing to
    /// read. A healthy connection waiting in the pool receives nothing — the store does not `LISTEN` — so
    /// anything readable is news, and the news that matters is a terminated backend's goodbye or the end
    /// of the stream (a restart, `pg_terminate_backend`, `idle_session_timeout`). Such a connection is
    /// replaced rather than used; checking costs a `poll` with no timeout, not a round trip.
    var isUsable: Bool {
        guard !isAbandoned, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else {
            return false
        }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Executes a prepared statement with binary parameters and binary results.
    ///
    /// A statement prepared by an earlier call that the server now refuses as stale — a migration changed
    /// the type of a column it returns ("cached plan must not change result type", SQLSTATE 0A000, raised
    /// before the statement runs and again on every later call) — is prepared afresh and executed once
    /// more, outside a transaction only: the refused call ran nothing and left nothing to roll back, where
    /// inside one the transaction is already aborted. Statements prepared before the change are discarded
    /// one by one as each is refused.
    func execute(_ statement: PostgresStatement, _ parameters: [PostgresValue]) throws(PostgresError) -> PostgresResult
    {
        let preparedBefore = prepared.contains(statement.name)
        do throws(PostgresError) {
            return try executePrepared(statement, parameters)
        } catch {
            guard preparedBefore, error.isStalePreparedStatement, PQtransactionStatus(handle) == PQTRANS_IDLE else {
                throw error
            }
            try execute(script: "DEALLOCATE \"\(statement.name)\"")
            prepared.remove(statement.name)
            return try executePrepared(statement, parameters)
        }
    }

    /// Prepares `statement` on the connection unless it was, then executes it.
    private func executePrepared(
        _ statement: PostgresStatement,
        _ parameters: [PostgresValue]
    ) throws(PostgresError) -> PostgresResult {
        if !prepared.contains(statement.name) {
            let types = parameters.map { $0.type.rawValue }
            roundTrips += 1
            let result = try exchange(statement.name) {
                PQsendPrepare(handle, statement.name, statement.sql, Int32(types.count), types)
            }
            _ = try check(result, statement: statement.name)
            prepared.insert(statement.name)
        }
        let encoded = parameters.map(\.binary)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: encoded.count)
        roundTrips += 1
        let result = withBinaryPointers(encoded) { values in
            Result { () throws(PostgresError) in
                try exchange(statement.name) {
                    PQsendQueryPrepared(handle, statement.name, Int32(encoded.count), values, lengths, formats, 1)
                }
            }
        }
        return try check(try result.get(), statement: statement.name)
    }

    /// Executes SQL text without parameters — several statements separated by semicolons — for schema
    /// migrations.
    func execute(script: String) throws(PostgresError) {
        roundTrips += 1
        _ = try check(try exchange("script") { PQsendQuery(handle, script) }, statement: "script")
    }

    /// Sends a request with `send` and reads every result, waiting on the socket — never in a blocking
    /// libpq call — so that nothing waits past ``deadline``: a server that stops answering (a frozen
    /// backend, a partition) costs the caller its deadline, not the server's silence. Returns the first
    /// failed result, or the last one.
    private func exchange(_ label: String, _ send: () -> Int32) throws(PostgresError) -> OpaquePointer? {
        guard send() == 1 else { throw lostConnection() }
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { break }
            if flushed < 0 { throw lostConnection() }
            try wait(for: Int16(POLLOUT | POLLIN), label)
            guard PQconsumeInput(handle) == 1 else { throw lostConnection() }
        }
        var kept: OpaquePointer?
        do throws(PostgresError) {
            while true {
                while PQisBusy(handle) != 0 {
                    try wait(for: Int16(POLLIN), label)
                    guard PQconsumeInput(handle) == 1 else { throw lostConnection() }
                }
                guard let result = PQgetResult(handle) else { break }
                let status = PQresultStatus(result)
                if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                    // The store never copies; a COPY would never end this loop. Give the connection up.
                    PQclear(result)
                    abandon()
                    throw PostgresError(.unexpectedResult, message: "\(label): a COPY, which the store never sends")
                }
                if let first = kept, !Self.succeeded(first) {
                    PQclear(result)
                } else {
                    if let first = kept { PQclear(first) }
                    kept = result
                }
            }
        } catch {
            if let kept { PQclear(kept) }
            throw error
        }
        return kept
    }

    private static func succeeded(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
    }

    /// Waits until the socket is ready for `events`, or throws ``PostgresError/Kind/timeout`` at the
    /// deadline — after asking the server to cancel the statement and giving the connection up.
    private func wait(for events: Int16, _ label: String) throws(PostgresError) {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                abandon()
                throw PostgresError(
                    .timeout,
                    message:
                        "\(label): PostgreSQL did not answer in time; the statement was cancelled and the connection dropped"
                )
            }
            var descriptor = pollfd(fd: PQsocket(handle), events: events, revents: 0)
            let milliseconds = Int32(clamping: remaining.wholeMillisecondsRoundedUp)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw lostConnection() }
        }
    }

    /// Gives the connection up after a missed deadline: it is never used again, and the server is asked,
    /// on a thread of its own, to cancel what it runs — a request that may itself go unanswered.
    private func abandon() {
        isAbandoned = true
        guard let cancel = PQgetCancel(handle) else { return }
        let request = UncheckedCancel(cancel)
        Thread.detachNewThread {
            var buffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(request.cancel, &buffer, Int32(buffer.count))
            PQfreeCancel(request.cancel)
        }
    }

    private func lostConnection() -> PostgresError {
        PostgresError(.connection, message: Self.firstLine(String(cString: PQerrorMessage(handle))))
    }

    /// The result if the statement succeeded; otherwise the server's error, with its SQLSTATE.
    private func check(_ result: OpaquePointer?, statement: String) throws(PostgresError) -> PostgresResult {
        guard let result else {
            throw PostgresError(.connection, message: Self.firstLine(String(cString: PQerrorMessage(handle))))
        }
        let owned = PostgresResult(result)
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let lost = PQstatus(handle) != CONNECTION_OK
            throw PostgresError(
                lost ? .connection : .statement,
                sqlState: sqlState,
                message: "\(statement): \(primary ?? Self.firstLine(String(cString: PQerrorMessage(handle))))"
            )
        }
        return owned
    }

    private static func firstLine(_ message: String) -> String {
        String(message.split(separator: "\n").first ?? "").trimmingCharacters(in: .whitespaces)
    }
}

/// A libpq cancel request, handed to the thread that sends it: libpq makes it for exactly this use, apart
/// from the connection.
private struct UncheckedCancel: @unchecked Sendable {
    let cancel: OpaquePointer
    init(_ cancel: OpaquePointer) { self.cancel = cancel }
}

/// Calls `body` with NUL-terminated copies of `strings`.
private func withCStrings<Result>(
    _ strings: [String],
    _ body: ([UnsafePointer<CChar>?]) -> Result
) -> Result {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { $0.map { UnsafePointer<CChar>($0) } } + [nil])
}

/// Calls `body` with pointers to each value's bytes (`nil` for SQL `NULL`), valid for the call.
private func withBinaryPointers<Result>(
    _ values: [[UInt8]?],
    _ body: ([UnsafePointer<CChar>?]) -> Result
) -> Result {
    let total = values.reduce(0) { $0 + ($1?.count ?? 0) }
    return withUnsafeTemporaryAllocation(byteCount: max(total, 1), alignment: 1) { buffer in
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(values.count)
        var offset = 0
        for value in values {
            guard let value else {
                pointers.append(nil)
                continue
            }
            let start = buffer.baseAddress! + offset
            value.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress {
                    start.copyMemory(from: source, byteCount: bytes.count)
                }
            }
            pointers.append(UnsafePointer(start.assumingMemoryBound(to: CChar.self)))
            offset += value.count
        }
        return body(pointers)
    }
}
#endif
