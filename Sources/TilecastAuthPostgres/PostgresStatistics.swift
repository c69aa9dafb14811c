// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
/// Counters of a store's or limiter's traffic with the server.
public struct PostgresStatistics: Sendable, Hashable {
    /// Requests sent and answered: statement executions, and the one-off preparation of each statement
    /// on each connection.
    public var roundTrips: Int
    /// Connections opened, replacements of lost ones included.
    public var connectionsOpened: Int
}
#endif
