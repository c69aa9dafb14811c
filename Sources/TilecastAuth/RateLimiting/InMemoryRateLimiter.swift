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
/// and at most `maximumTrackedKeys` are kept; past that the least recently used are dropped first.
public final class InMemoryRateLimiter: RateLimiter, Sendable {
    private struct State {
        var buckets: [RateLimitKey: TokenBucket] = [:]
        var admissionsSinceSweep = 0
    }

    /// Attempts a key may make at once.
    public let capacity: Int
    /// Seconds for one attempt to come back.
    public let refillInterval: Double
    /// The most keys remembered at once.
    public let maximumTrackedKeys: Int

    private let state = LockedValue(State())

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
    }

    public func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
        state.withLock { state in
            var bucket = state.buckets[key] ?? TokenBucket(capacity: capacity, at: now)
            let decision = bucket.take(at: now, capacity: capacity, refillInterval: refillInterval)
            guard decision == .admitted else { return decision }
            state.buckets[key] = bucket
            state.admissionsSinceSweep += 1
            if state.admissionsSinceSweep >= 1024 || state.buckets.count > maximumTrackedKeys {
                sweep(&state, at: now)
            }
            return decision
        }
    }

    /// How many keys the limiter remembers now.
    public var trackedKeyCount: Int {
        state.withLock { $0.buckets.count }
    }

    /// Forgets full buckets; if more than `maximumTrackedKeys` remain, forgets the least recently used
    /// down to nine tenths of it, so the next eviction is a tenth of the budget away and the cost stays
    /// amortised.
    private func sweep(_ state: inout State, at now: Date) {
        state.admissionsSinceSweep = 0
        state.buckets = state.buckets.filter {
            $0.value.tokens(at: now, capacity: capacity, refillInterval: refillInterval) < Double(capacity)
        }
        guard state.buckets.count > maximumTrackedKeys else { return }
        let excess = state.buckets.count - maximumTrackedKeys * 9 / 10
        let oldest = state.buckets.sorted { $0.value.updatedAt < $1.value.updatedAt }.prefix(excess)
        for (key, _) in oldest {
            state.buckets[key] = nil
        }
    }
}
