// SPDX-License-Identifier: Apache-2.0

/// Which store the benchmark's engine runs on.
public enum BenchmarkStore: Sendable, Equatable {
    /// ``InMemoryGrantStore`` with ``InMemoryRateLimiter``.
    case memory
    /// ``PostgresGrantStore`` with ``PostgresRateLimiter`` on the server at `databaseURL`, each run in a
    /// schema of its own — every instance of a multi-instance deployment sharing all state. Only with
    /// the package trait PostgreSQL. The store remembers `rememberedRecords` of the records it wrote
    /// (``PostgresConfiguration/rememberedRecords``); every operation of the benchmark presents a code or
    /// token the same store wrote, and with the default capacity, more than a run prepares, it remembers
    /// them all (the report's `remembered` column says how many were) — as one instance does, and not as
    /// several behind a balancer, which each remember only their own: `0` measures those. The limiter
    /// leases up to `leaseSize` attempts per round trip (``PostgresRateLimiter/leaseSize``, 32 as its
    /// default; 1 for none); every request of the benchmark comes from one address, the case leases serve,
    /// and `1` measures a round trip for every admission, as for requests each from an address of its own.
    #if PostgreSQL
    case postgres(databaseURL: String, rememberedRecords: Int = 10_000, leaseSize: Int = 32)
    #endif

    /// Whether the store remembers the records it wrote, so that the benchmark's operations, which each
    /// present a record the same store wrote, skip their lookup.
    public var remembersRecords: Bool {
        switch self {
        case .memory: false
        #if PostgreSQL
        case .postgres(_, let rememberedRecords, _): rememberedRecords > 0
        #endif
        }
    }

    /// What the report calls it.
    public var name: String {
        switch self {
        case .memory: "in-memory store"
        #if PostgreSQL
        case .postgres(_, let rememberedRecords, let leaseSize):
            (rememberedRecords == 0
                ? "PostgreSQL store and rate limiter, remembering no record it wrote (as behind a balancer)"
                : "PostgreSQL store and rate limiter, remembering up to \(rememberedRecords) records it wrote")
                + (leaseSize == 1
                    ? ", a round trip for every admission" : ", leasing up to \(leaseSize) admissions a round trip")
        #endif
        }
    }
}
