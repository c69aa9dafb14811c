// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
/// Where and how ``PostgresGrantStore`` and ``PostgresRateLimiter`` reach PostgreSQL.
public struct PostgresConfiguration: Sendable {
    /// A libpq connection string or URI, for example
    /// `postgresql://tilecast@db.internal/tilecast?sslmode=verify-full` or
    /// `postgresql:///tilecast?host=/var/run/postgresql` (a Unix socket). It goes to the primary: every
    /// read of a code, token or session must see the latest write (see `Docs/PostgreSQL.md`).
    public let databaseURL: String

    /// The schema that holds the tables and functions, created by ``PostgresGrantStore/migrate()``. One
    /// to 63 characters of `a`–`z`, `0`–`9` and `_`, not starting with a digit nor with `pg_` (which
    /// PostgreSQL reserves). It is quoted wherever it is used, so a keyword such as `user` works too.
    public let schema: String

    /// The most connections open at once. One caller holds one connection for one operation; callers
    /// beyond this wait for a connection to come back.
    public let maximumConnections: Int

    /// Seconds to wait for a new connection (libpq's `connect_timeout`).
    public let connectTimeout: Int

    /// The longest a caller waits for a connection while all ``maximumConnections`` are in use. Past it
    /// the operation throws ``PostgresError/Kind/poolTimeout`` — a 503 — having sent nothing, so a slow
    /// or overloaded database sheds requests instead of queueing them without end.
    public let connectionWaitTimeout: Duration

    /// The longest one statement may run on the server, waits for row locks included: PostgreSQL's
    /// `statement_timeout`, set on every connection the store opens. A statement past it is cancelled by
    /// the server and its transaction rolled back, so the operation throws — a 503 — and changes nothing.
    /// Every request-path statement of the store takes well under a millisecond; the limit is for a lock
    /// held elsewhere. ``PostgresGrantStore/migrate()`` and ``PostgresGrantStore/removeExpired(at:)`` are
    /// exempt: they may take longer, and are not on the request path.
    ///
    /// The server enforces it, so it cannot bound a server that does not answer at all — a frozen
    /// backend, a network partition. ``operationTimeout`` does that, on the client.
    public let statementTimeout: Duration
    /// The longest an operation may wait for PostgreSQL once it holds a connection, by the client's clock:
    /// past it the store asks the server to cancel, drops the connection and throws
    /// ``PostgresError/Kind/timeout`` — a 503 — whatever the server does. By default the statement timeout
    /// and one second more, so that a slow statement is ended by the server, cleanly, before the client
    /// gives up. It also sets TCP's `tcp_user_timeout` on the connections. The maintenance operations
    /// exempt from the statement timeout get ten minutes. A request then waits at most
    /// ``connectionWaitTimeout`` for a connection, ``connectTimeout`` to open one, and this.
    public let operationTimeout: Duration

    /// How many of the codes and refresh tokens it wrote a store remembers, the latest, so that an
    /// exchange of a code it issued, or a refresh of a token it wrote, skips the lookup's round trip: the
    /// engine goes forward on the remembered record as far as the write, which checks again under its
    /// locks whatever another instance may have changed, and reads the record whenever it would refuse
    /// (`GrantStore`'s "Remembered records"). Answers are the same either way. 0 remembers nothing.
    /// A record costs a few hundred bytes: 10,000 of them a few megabytes.
    public let rememberedRecords: Int

    /// Creates a configuration. The fields are constants, so no check can be skipped by setting them
    /// afterwards.
    ///
    /// - Throws: ``PostgresError/Kind/invalidConfiguration`` unless `schema` is a valid schema name as
    ///   described above, `maximumConnections` and `connectTimeout` are at least 1, and
    ///   `connectionWaitTimeout` and `statementTimeout` at least a millisecond, and `rememberedRecords` is
    ///   not negative. A thrown error, not a
    ///   precondition: the schema name is spliced into SQL, and a check `-Ounchecked` removed would
    ///   leave nothing between a bad name and the database.
    public init(
        databaseURL: String,
        schema: String = "tilecast",
        maximumConnections: Int = 10,
        connectTimeout: Int = 10,
        connectionWaitTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(5),
        operationTimeout: Duration? = nil,
        rememberedRecords: Int = 10_000
    ) throws(PostgresError) {
        func require(_ condition: Bool, _ message: String) throws(PostgresError) {
            guard condition else { throw PostgresError(.invalidConfiguration, message: message) }
        }
        try require(Self.isValidSchemaName(schema), "schema must match [a-z_][a-z0-9_]{0,62} without a pg_ prefix")
        try require(maximumConnections >= 1, "maximumConnections must be at least 1")
        try require(connectTimeout >= 1, "connectTimeout must be at least 1")
        try require(connectionWaitTimeout >= .milliseconds(1), "connectionWaitTimeout must be at least 1 ms")
        try require(statementTimeout >= .milliseconds(1), "statementTimeout must be at least 1 ms")
        try require((operationTimeout ?? .seconds(1)) >= .milliseconds(1), "operationTimeout must be at least 1 ms")
        try require(rememberedRecords >= 0, "rememberedRecords must not be negative")
        self.databaseURL = databaseURL
        self.schema = schema
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
        self.connectionWaitTimeout = connectionWaitTimeout
        self.statementTimeout = statementTimeout
        self.operationTimeout = operationTimeout ?? statementTimeout + .seconds(1)
        self.rememberedRecords = rememberedRecords
    }

    /// The client-side deadline of the maintenance operations, which the statement timeout exempts.
    static let maintenanceTimeout = Duration.seconds(600)

    /// ``statementTimeout`` in milliseconds, at most PostgreSQL's largest `statement_timeout`.
    var statementTimeoutMilliseconds: Int {
        min(statementTimeout.wholeMillisecondsRoundedUp, Int(Int32.max))
    }

    /// The schema as a quoted SQL identifier.
    var quotedSchema: String { "\"\(schema)\"" }

    /// Whether `name` is a schema name the store accepts.
    public static func isValidSchemaName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count), let first = bytes.first else { return false }
        let isLetter = { (byte: UInt8) in (0x61...0x7A).contains(byte) || byte == 0x5F }
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        return isLetter(first) && bytes.allSatisfy { isLetter($0) || isDigit($0) } && !name.hasPrefix("pg_")
    }
}

extension PostgresConfiguration: CustomStringConvertible {
    /// The configuration without the database URL, which may carry a password.
    public var description: String {
        "PostgresConfiguration(schema: \(schema), maximumConnections: \(maximumConnections), "
            + "connectTimeout: \(connectTimeout), connectionWaitTimeout: \(connectionWaitTimeout), "
            + "statementTimeout: \(statementTimeout), operationTimeout: \(operationTimeout), "
            + "rememberedRecords: \(rememberedRecords))"
    }
}
#endif
