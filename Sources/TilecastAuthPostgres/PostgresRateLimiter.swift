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
/// every `pruneInterval` round trips (a fresh bucket is the same).
///
/// ## Leases
///
/// A key this instance admitted moments before — a busy peer address, or many users behind one — may be
/// admitted from a lease: the round trip asks for up to `leaseSize` attempts at once, and the instance
/// admits the ones it got as they come, without a round trip, for at most a quarter of
/// `refillInterval` (and at most a second); what is left then is dropped. Each of a key's leases asks
/// for twice the attempts the one before admitted, from 2 up to `leaseSize`. Two rules keep every limit
/// as exact as the bucket:
///
/// - **Never an attempt the bucket would refuse.** The round trip that grants a lease admits one
///   attempt itself, and a lease lasts at most a quarter of a refill, so while leased attempts are
///   outstanding the bucket's tokens and those attempts together stay below the capacity: each attempt
///   admitted from a lease, when it comes, is one a single bucket counting every attempt as it came
///   would admit. This holds to within the rounding of the bucket's `float8` arithmetic, which debits a
///   lease's attempts in one subtraction (a few units in the last place of the token count: 10⁻¹⁵ of an
///   attempt at a capacity of 10), and in the times the engine passes, as every admission is counted:
///   instances whose clocks disagree, or requests that reach the server out of the order of their
///   times, make the bucket itself inexact, with or without leases.
/// - **Only the top half.** A lease is granted only when the bucket keeps at least half its capacity
///   after it, so a key nearing its limit is admitted one attempt per round trip, as without leases.
///
/// What leases cost is on the strict side: attempts held by one instance that another, asked by the
/// same key in those moments, cannot have — fewer than half the capacity across every instance, since
/// each lease leaves the bucket at least half — and dropped when unused. A key admitted once, or
/// rarely, never has a lease; `leaseSize: 1` turns them off. While the database is stopped, a request
/// admitted from a lease reaches the store instead of the limiter's failing upsert, and is answered 503
/// after the same one wait of `connectionWaitTimeout`: the store's first operation finds no connection,
/// and a write on a remembered record that found none is answered without a read
/// (``PostgresError/backendWasUnavailable``). An instance keeps the leases of at most
/// 4,096 keys, making room by dropping first the keys no longer recent and then the leases that end
/// first.
///
/// It shares ``PostgresGrantStore``'s schema; ``PostgresGrantStore/migrate()`` creates its table.
public final class PostgresRateLimiter: RateLimiter, Sendable {
    /// Attempts a key may make at once.
    public let capacity: Int
    /// Seconds for one attempt to come back.
    public let refillInterval: Double
    private let pool: PostgresConnectionPool
    private let statements: PostgresStatements
    /// The most attempts one round trip may admit ahead of their arrival (see "Leases"); 32 by default,
    /// 1 for none.
    public let leaseSize: Int
    /// How long a lease's attempts may be admitted after its round trip, in seconds.
    let leaseLifetime: Double
    private let roundTripsSincePrune = LockedValue(0)
    private let leases = LockedValue(RateLimitLeases())
    private static let pruneInterval = 1024

    /// Creates a limiter with its own connections.
    ///
    /// - Precondition: `capacity` and `leaseSize` are at least 1 and `refillInterval` positive and finite.
    public init(
        configuration: PostgresConfiguration,
        capacity: Int = 100,
        refillInterval: Double = 1,
        leaseSize: Int = 32
    ) {
        precondition(capacity >= 1, "capacity must be at least 1")
        precondition(refillInterval > 0 && refillInterval.isFinite, "refillInterval must be positive")
        precondition(leaseSize >= 1, "leaseSize must be at least 1")
        self.capacity = capacity
        self.refillInterval = refillInterval
        self.leaseSize = min(leaseSize, Int(Int32.max))
        self.leaseLifetime = min(refillInterval / 4, 1)
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

    /// Attempts admitted from leases so far, without a round trip of their own (for tests).
    var attemptsAdmittedFromLeases: Int {
        leases.withLock { $0.admittedFromLeases }
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
        let time = now.timeIntervalSinceReferenceDate
        let (leaseSize, lifetime) = (self.leaseSize, leaseLifetime)
        let bytes = Array(key.rawValue.utf8)
        let asked = leases.withLock { leases -> Int? in
            leases.admitFromLease(bytes, at: time)
                ? nil : leases.attemptsToAsk(bytes, at: time, lifetime: lifetime, most: leaseSize)
        }
        guard let asked else { return .admitted }
        let admit = statements.rateLimitAdmit
        let bucket: [PostgresValue] = [
            .text(key.rawValue), .date(now), .float8(Double(capacity)), .float8(refillInterval),
        ]
        let parameters = bucket + [.int4(Int32(asked))]
        let prune = roundTripsSincePrune.withLock { count -> Bool in
            count += 1
            guard count >= Self.pruneInterval else { return false }
            count = 0
            return true
        }
        // A full bucket is one not touched for capacity × refillInterval seconds.
        let fullBefore = now.addingTimeInterval(-Double(capacity) * refillInterval)
        let pruneStatement = statements.rateLimitPrune
        let waitStatement = statements.rateLimitWait
        let outcome = try await pool.withConnection(idempotent: false) {
            connection throws(PostgresError) -> RoundTripOutcome in
            let admitted = try connection.execute(admit, parameters)
            if prune {
                // Housekeeping: a failure here must not turn a counted attempt into a 503.
                _ = try? connection.execute(pruneStatement, [.date(fullBefore)])
            }
            if admitted.rowCount == 1 {
                return .granted(max(1, Int(try admitted.row(0).int4(0))))
            }
            let result = try connection.execute(waitStatement, bucket)
            // A row pruned in between is a full bucket: the next attempt will pass.
            return .refused(waitSeconds: result.rowCount == 1 ? try result.row(0).float8(0) : 1)
        }
        guard case .refused(let wait) = outcome else {
            if case .granted(let granted) = outcome {
                leases.withLock { $0.record(bytes, granted: granted, at: time, lifetime: lifetime) }
            }
            return .admitted
        }
        return .limited(retryAfterSeconds: wait < Double(Int32.max) ? max(1, Int(wait)) : Int(Int32.max))
    }
}

/// What an admission's round trip found.
private enum RoundTripOutcome {
    /// The attempt admitted, with as many in all as the bucket granted (more than one for a lease).
    case granted(Int)
    /// The attempt refused; the bucket holds one again in about `waitSeconds`.
    case refused(waitSeconds: Double)
}

/// One instance's leases, by key (``PostgresRateLimiter``, "Leases").
struct RateLimitLeases {
    struct Lease {
        /// Attempts left to admit.
        var remaining: Int
        /// The span in which they may be admitted, in seconds since the reference date: from the time of
        /// the round trip that granted them to a lifetime after it.
        var start: Double
        var end: Double
        /// Attempts admitted since the round trip that granted the lease, that one included.
        var admitted: Int
    }

    /// The most keys whose leases an instance keeps.
    static let keyLimit = 4096
    /// Leases by the key's UTF-8 bytes, as the server compares keys: Swift's `String` equality would
    /// take a key and its canonically equivalent spelling for one, where they are two buckets.
    private(set) var byKey: [[UInt8]: Lease] = [:]
    /// Attempts admitted from leases so far.
    private(set) var admittedFromLeases = 0

    /// Admits one attempt from `key`'s lease, if it has an attempt left and `time` is within it.
    mutating func admitFromLease(_ key: [UInt8], at time: Double) -> Bool {
        guard var lease = byKey[key], lease.remaining > 0, time >= lease.start, time <= lease.end else {
            return false
        }
        lease.remaining -= 1
        lease.admitted += 1
        byKey[key] = lease
        admittedFromLeases += 1
        return true
    }

    /// How many attempts the round trip for `key` asks for: one for a key not admitted here within the
    /// last `lifetime` seconds; otherwise twice what the last lease admitted, from 2 up to `most`.
    func attemptsToAsk(_ key: [UInt8], at time: Double, lifetime: Double, most: Int) -> Int {
        guard most > 1, let lease = byKey[key], time >= lease.start, time <= lease.end + lifetime else { return 1 }
        return min(most, max(2, 2 * lease.admitted))
    }

    /// Keeps what a round trip at `time` granted beyond the attempt it admitted, to be admitted until
    /// `time + lifetime`; a lease still running, granted before it, adds what it has left and keeps its
    /// earlier end. The next round trip asks for twice what this lease admits.
    mutating func record(_ key: [UInt8], granted: Int, at time: Double, lifetime: Double) {
        var lease = Lease(remaining: granted - 1, start: time, end: time + lifetime, admitted: 1)
        if let earlier = byKey[key], earlier.remaining > 0, time >= earlier.start, time <= earlier.end {
            // Round trips that overlapped: one lease of what both left, ending with the earlier.
            lease.remaining += earlier.remaining
            lease.end = earlier.end
            lease.admitted += earlier.admitted
        } else if byKey[key] == nil, byKey.count >= Self.keyLimit {
            makeRoom(at: time, lifetime: lifetime)
        }
        byKey[key] = lease
    }

    /// Drops the keys no longer admitted recently, and then, while more than three quarters of the
    /// limit remain, those whose leases end first — their attempts left are dropped, the strict side —
    /// so that a sweep comes at most once every thousand new keys, whatever the churn.
    private mutating func makeRoom(at time: Double, lifetime: Double) {
        byKey = byKey.filter { _, lease in time >= lease.start && time <= lease.end + lifetime }
        let target = Self.keyLimit * 3 / 4
        guard byKey.count > target else { return }
        let latest = byKey.sorted { $0.value.end > $1.value.end }.prefix(target)
        byKey = Dictionary(uniqueKeysWithValues: latest.map { ($0.key, $0.value) })
    }
}
#endif
