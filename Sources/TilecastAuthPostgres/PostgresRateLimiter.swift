// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
public import Foundation
public import TilecastAuth

/// A token-bucket `RateLimiter` on PostgreSQL, so that a limit holds across every server instance.
///
/// The same buckets as `InMemoryRateLimiter` — `capacity` attempts at once and one more every
/// `refillInterval` — kept one row per key in the store's schema. An admitted attempt is one round trip
/// and one statement: an upsert that locks the key's row, refills it for the time passed and debits it,
/// so concurrent attempts from any number of instances are counted one by one. A refused one reads the
/// bucket once more for its `Retry-After`. Buckets that have refilled completely are deleted
/// every `pruneInterval` attempts (a fresh bucket is the same).
///
/// It shares ``PostgresGrantStore``'s schema; ``PostgresGrantStore/migrate()`` creates its table.
public final class PostgresRateLimiter: RateLimiter, Sendable {
    /// Attempts a key may make at once.
    public let capacity: Int
    /// Seconds for one attempt to come back.
    public let refillInterval: Double
    private let pool: PostgresConnectionPool
    private let statements: PostgresStatements
    private let attemptsSincePrune = LockedValue(0)
    private static let pruneInterval = 1024

    /// Creates a limiter with its own connections.
    ///
    /// - Precondition: `capacity` is at least 1 and `refillInterval` positive and finite.
    public init(configuration: PostgresConfiguration, capacity: Int = 100, refillInterval: Double = 1) {
        precondition(capacity >= 1, "capacity must be at least 1")
        precondition(refillInterval > 0 && refillInterval.isFinite, "refillInterval must be positive")
        self.capacity = capacity
        self.refillInterval = refillInterval
        self.pool = PostgresConnectionPool(configuration: configuration)
        self.statements = PostgresStatements(schema: configuration.quotedSchema)
    }

    /// Closes the idle connections and refuses further attempts (each then fails closed with 503).
    public func close() {
        pool.close()
    }

    /// The value of the server setting `name` on one of this limiter's connections (for tests).
    func sessionSetting(_ name: String) async throws -> String {
        try await pool.sessionSetting(name)
    }

    /// Round trips and connections so far.
    public var statistics: PostgresStatistics {
        PostgresStatistics(
            roundTrips: pool.roundTrips,
            connectionsOpened: pool.connectionsOpened,
            connectionsRefused: pool.connectionsRefused,
            operationsInPlace: pool.operationsInPlace,
            transientRetries: pool.transientRetries
        )
    }

    public func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
        let admit = statements.rateLimitAdmit
        let parameters: [PostgresValue] = [
            .text(key.rawValue), .date(now), .float8(Double(capacity)), .float8(refillInterval),
        ]
        let prune = attemptsSincePrune.withLock { count -> Bool in
            count += 1
            guard count >= Self.pruneInterval else { return false }
            count = 0
            return true
        }
        // A full bucket is one not touched for capacity × refillInterval seconds.
        let fullBefore = now.addingTimeInterval(-Double(capacity) * refillInterval)
        let pruneStatement = statements.rateLimitPrune
        let waitStatement = statements.rateLimitWait
        let wait = try await pool.withConnection(idempotent: false) { connection throws(PostgresError) -> Double in
            let admitted = try connection.execute(admit, parameters).rowCount == 1
            if prune {
                // Housekeeping: a failure here must not turn a counted attempt into a 503.
                _ = try? connection.execute(pruneStatement, [.date(fullBefore)])
            }
            if admitted {
                return 0
            }
            let result = try connection.execute(waitStatement, parameters)
            // A row pruned in between is a full bucket: the next attempt will pass.
            return result.rowCount == 1 ? try result.row(0).float8(0) : 1
        }
        guard wait > 0 else { return .admitted }
        return .limited(retryAfterSeconds: wait < Double(Int32.max) ? max(1, Int(wait)) : Int(Int32.max))
    }
}
#endif
