// SPDX-License-Identifier: Apache-2.0

/// Which store the benchmark's engine runs on.
public enum BenchmarkStore: Sendable, Equatable {
    /// ``InMemoryGrantStore`` with ``InMemoryRateLimiter``.
    case memory
    /// ``PostgresGrantStore`` with ``PostgresRateLimiter`` on the server at `databaseURL`, each run in a
    /// schema of its own — every instance of a multi-instance deployment sharing all state. Only with
    /// the package trait PostgreSQL.
    #if PostgreSQL
    case postgres(databaseURL: String)
    #endif

    /// What the report calls it.
    public var name: String {
        switch self {
        case .memory: "in-memory store"
        #if PostgreSQL
        case .postgres: "PostgreSQL store and rate limiter"
        #endif
        }
    }
}
