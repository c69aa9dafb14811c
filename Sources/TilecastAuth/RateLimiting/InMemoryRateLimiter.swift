// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A token-bucket ``RateLimiter`` held in process memory.
///
/// Each key may make `capacity` attempts at once and one more every `refillInterval`. The defaults —
/// 100 at once, one a second after that — leave room for the many app users that share one carrier-grade
/// NAT address, while capping what one address can make the server do. (Guessing is not what the limit
/// is for: every code and token is a 256-bit secret.)
///
/// Memory is bounded: buckets that have refilled completely are forgotten (a fresh bucket is the same),
/// and at most `maximumTrackedKeys` are kept; past that the least recently used are dropped first, down to
/// nine tenths of the limit. Admission is O(1) amortised whatever the churn of keys: a sweep of all
/// buckets runs only after as many admissions as there are buckets, or when the limit is passed, and a
/// sweep at the limit always leaves room for a tenth of it — so an attacker cycling through fresh keys
/// pays for each sweep with a tenth of the limit in admissions.
///
/// Eviction forgets a bucket's debt: a peer whose bucket was dropped starts again full. An attacker with
/// more addresses than `maximumTrackedKeys` can therefore flush the table; size the limit above the peers
/// a server expects to see within one refill of a full bucket (`capacity × refillInterval`).
public final class InMemoryRateLimiter: RateLimiter, Sendable {
    struct State {
        var buckets: [RateLimitKey: TokenBucket] = [:]
        var admissionsSinceSweep = 0
        /// Buckets looked at by every sweep so far: the work admission costs, for the tests.
        var bucketsSwept = 0
    }

    /// Attempts a key may make at once.
    public let capacity: Int
    /// Seconds for one attempt to come back.
    public let refillInterval: Double
    /// The most keys remembered at once.
    public let maximumTrackedKeys: Int
    /// How many keys a sweep at the limit keeps: nine tenths of the limit, at least one.
    private let keysKeptAtLimit: Int

    let state = LockedValue(State())

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - capacity: Attempts a key may make at once; at least 1.
    ///   - refillInterval: Seconds for one attempt to come back; more than 0.
    ///   - maximumTrackedKeys: The most keys remembered at once; at least 1.
    public init(capacity: Int = 100, refillInterval: Double = 1, maximumTrackedKeys: Int = 100_000) {
        precondition(capacity >= 1, "capacity must be at least 1")
        precondition(refillInterval > 0 && refillInterval.isFinite, "refillInterval must be positive")
        precondition(maximumTrackedKeys >= 1, "maximumTrackedKeys must be at least 1")
        self.capacity = capacity
        self.refillInterval = refillInterval
        self.maximumTrackedKeys = maximumTrackedKeys
        // Nine tenths without multiplying first: `maximumTrackedKeys * 9` overflows for a limit as large
        // as `Int.max`, a natural way to ask for no limit.
        self.keysKeptAtLimit = max(1, maximumTrackedKeys - maximumTrackedKeys / 10)
    }

    public func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
        admitNow(key, at: now)
    }

    /// ``admit(_:at:)`` done under the limiter's lock and returned, without suspending: ``AuthEngine``
    /// calls it directly when its limiter is this one.
    func admitNow(_ key: RateLimitKey, at now: Date) -> RateLimitDecision {
        state.withLock { state in
            // One hash of the key for a key already tracked: its bucket is found by index and, when the
            // attempt is admitted, written back there (a limited attempt leaves it as it was).
            let index = state.buckets.index(forKey: key)
            var bucket = index.map { state.buckets.values[$0] } ?? TokenBucket(capacity: capacity, at: now)
            let decision = bucket.take(at: now, capacity: capacity, refillInterval: refillInterval)
            guard decision == .admitted else { return decision }
            if let index {
                state.buckets.values[index] = bucket
            } else {
                state.buckets[key] = bucket
            }
            state.admissionsSinceSweep += 1
            if state.buckets.count > maximumTrackedKeys
                || state.admissionsSinceSweep >= max(Self.admissionsBetweenSweeps, state.buckets.count)
            {
                sweep(&state, at: now)
            }
            return decision
        }
    }

    /// Admissions between two sweeps of full buckets when few keys are tracked.
    static let admissionsBetweenSweeps = 1024

    /// How many keys the limiter remembers now.
    public var trackedKeyCount: Int {
        state.withLock { $0.buckets.count }
    }

    /// Forgets full buckets; then, if more than nine tenths of `maximumTrackedKeys` remain after the
    /// limit was passed, forgets the least recently used down to nine tenths — even when forgetting full
    /// buckets freed some, so that the next sweep at the limit is a tenth of it away.
    private func sweep(_ state: inout State, at now: Date) {
        let overLimit = state.buckets.count > maximumTrackedKeys
        state.admissionsSinceSweep = 0
        state.bucketsSwept += state.buckets.count
        state.buckets = state.buckets.filter {
            $0.value.tokens(at: now, capacity: capacity, refillInterval: refillInterval) < Double(capacity)
        }
        let keep = keysKeptAtLimit
        guard overLimit, state.buckets.count > keep else { return }
        // The (count − keep)-th oldest update time, found in linear time; everything older goes, then ties.
        var times = state.buckets.values.map(\.updatedAt)
        let excess = state.buckets.count - keep
        let cutoff = Self.select(excess - 1, in: &times)
        var tiesToDrop = excess - times.count { $0 < cutoff }
        state.buckets = state.buckets.filter { _, bucket in
            if bucket.updatedAt < cutoff { return false }
            guard bucket.updatedAt == cutoff, tiesToDrop > 0 else { return true }
            tiesToDrop -= 1
            return false
        }
    }

    /// The `k`-th smallest of `values` (0-based), by quickselect with the middle element as pivot:
    /// expected linear time. Reorders `values`.
    static func select(_ k: Int, in values: inout [Date]) -> Date {
        var low = 0
        var high = values.count - 1
        while low < high {
            let pivot = values[low + (high - low) / 2]
            var i = low
            var j = high
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j {
                high = j
            } else if k >= i {
                low = i
            } else {
                return values[k]
            }
        }
        return values[k]
    }
}
