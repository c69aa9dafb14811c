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
        let keys = ["dbname", "connect_timeout", "application_name", "client_encoding"]
        // The schema in the application name tells an administrator (pg_stat_activity) which store a
        // connection belongs to.
        let values = [
            configuration.databaseURL, String(configuration.connectTimeout), "tilecast-auth/\(configuration.schema)",
            "UTF8",
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
        let connection = PostgresConnection(handle: handle)
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
        guard PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Executes a prepared statement with binary parameters and binary results.
    func execute(_ statement: PostgresStatement, _ parameters: [PostgresValue]) throws(PostgresError) -> PostgresResult
    {
        if !prepared.contains(statement.name) {
            let types = parameters.map { $0.type.rawValue }
            roundTrips += 1
            let result = PQprepare(handle, statement.name, statement.sql, Int32(types.count), types)
            _ = try check(result, statement: statement.name)
            prepared.insert(statement.name)
        }
        let encoded = parameters.map(\.binary)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: encoded.count)
        roundTrips += 1
        let result = withBinaryPointers(encoded) { values in
            PQexecPrepared(handle, statement.name, Int32(encoded.count), values, lengths, formats, 1)
        }
        return try check(result, statement: statement.name)
    }

    /// Executes SQL text without parameters — several statements separated by semicolons — for schema
    /// migrations.
    func execute(script: String) throws(PostgresError) {
        roundTrips += 1
        _ = try check(PQexec(handle, script), statement: "script")
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
