// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
public import TilecastAuth

/// A failure talking to PostgreSQL. The engine answers any of them with 503 and changes nothing.
///
/// Messages come from libpq and the server's primary message only — never a query's parameters, so a
/// digest or an account id does not reach a log through an error.
public struct PostgresError: BackendAvailabilityError, Sendable, Hashable {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// No connection could be made, or it was lost.
        case connection
        /// The server refused a statement.
        case statement
        /// The server answered in a shape this library does not expect (wrong columns or types).
        case unexpectedResult
        /// The database's schema is newer than this library knows: a newer release migrated it.
        case schemaVersion
        /// Every connection of the pool stayed in use for
        /// ``PostgresConfiguration/connectionWaitTimeout``: the pool is too small for the load, or the
        /// server too slow. Nothing was sent.
        case poolTimeout
        /// PostgreSQL did not answer within ``PostgresConfiguration/operationTimeout`` — a frozen backend,
        /// a network partition. The statement was cancelled and the connection dropped; whether a write
        /// committed is unknown, as with a lost connection.
        case timeout
        /// The store was closed.
        case closed
        /// A ``PostgresConfiguration`` value is out of range: the schema name, a count or a timeout.
        case invalidConfiguration
    }

    public var kind: Kind
    /// The SQLSTATE code for a statement error, such as `40001` (serialization failure).
    public var sqlState: String?
    public var message: String
    /// Whether the operation failed before anything of it was sent, because the pool could lend it no
    /// connection: every connection stayed busy for ``PostgresConfiguration/connectionWaitTimeout``
    /// (``Kind/poolTimeout``), none could be opened within it (``Kind/connection``), or the store was
    /// closed (``Kind/closed``). An operation started at that moment would have waited and failed the
    /// same way; the engine answers such a failure of a write without reading the record again
    /// (`BackendAvailabilityError`). `false` whenever anything of the store's call was sent: a retry's
    /// failure, and that of a call's later operation (the lookup after a rotation answered superseded,
    /// the read after a revocation that wrote nothing), included.
    public internal(set) var backendWasUnavailable: Bool

    public init(_ kind: Kind, sqlState: String? = nil, message: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.backendWasUnavailable = false
    }

    /// A failure of an operation the pool could lend no connection to, before anything of it was sent.
    static func unavailable(_ kind: Kind, message: String) -> PostgresError {
        var error = PostgresError(kind, message: message)
        error.backendWasUnavailable = true
        return error
    }

    /// Whether the failure was a serialization failure or a deadlock, which a retry resolves.
    var isTransient: Bool {
        sqlState == "40001" || sqlState == "40P01"
    }

    /// Whether the server may have refused a prepared statement because the row type it returns changed
    /// since it was prepared — a migration changed a column's type: "cached plan must not change result
    /// type", SQLSTATE 0A000, raised before the statement runs and again on every later call until the
    /// statement is prepared afresh. 0A000 is `feature_not_supported`, which other refusals share (the
    /// message is not compared: the server may translate it); a statement refused so for another reason
    /// is refused again once prepared afresh, and that refusal is the caller's.
    var isStalePreparedStatement: Bool {
        sqlState == "0A000"
    }
}

extension PostgresError: CustomStringConvertible {
    public var description: String {
        "PostgresError(\(kind)\(sqlState.map { ", SQLSTATE \($0)" } ?? ""): \(message))"
    }
}
#endif
