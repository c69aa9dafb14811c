// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
/// Counters of a store's or limiter's traffic with the server.
public struct PostgresStatistics: Sendable, Hashable {
    /// Requests sent and answered: statement executions, and the one-off preparation of each statement
    /// on each connection.
    public var roundTrips: Int
    /// Connections opened, replacements of lost ones included.
    public var connectionsOpened: Int
    /// Attempts to open a connection that failed: a server down, starting up, shutting down or full.
    /// While they fail, the pool tries one at a time, with jittered exponential backoff, so this grows
    /// by a handful a second, never by the number of callers.
    public var connectionsRefused: Int = 0
    /// Operations run in place on a thread of a store's ``PostgresGrantStore/taskExecutor``; the others
    /// were handed to a thread of their own and back.
    public var operationsInPlace: Int = 0
    /// Transactions the server ended with a serialization failure or a deadlock, and the store ran
    /// again (twice at most each). Under READ COMMITTED, the store's isolation level, its operations lock
    /// rows in one order, and `removeExpired` never waits for a row, so they do not deadlock with each
    /// other; a count that grows says something else holds their rows.
    public var transientRetries: Int = 0
    /// Calls of ``PostgresGrantStore/removeExpired(at:)`` that removed nothing because another
    /// instance's was under way — one instance prunes at a time — and returned 0 without looking: a
    /// count that grows with every call says instances prune at the same moments. Always 0 for a
    /// ``PostgresRateLimiter``.
    public var expiredRemovalsSkipped: Int = 0
    /// Codes and refresh tokens answered from what the store remembers of its own writes
    /// (``PostgresConfiguration/rememberedRecords``), each a lookup's round trip saved — unless the engine
    /// found it stale, or would have refused on it, and read it after all. Always 0 for a
    /// ``PostgresRateLimiter``.
    public var rememberedRecordsUsed: Int = 0
    /// Remembered codes and refresh tokens that a write of this store found changed since — redeemed,
    /// rotated or revoked through another instance, or gone — and that were then read: the share of
    /// ``rememberedRecordsUsed`` that saved nothing. Always 0 for a ``PostgresRateLimiter``.
    public var rememberedRecordsFoundStale: Int = 0
}
#endif
