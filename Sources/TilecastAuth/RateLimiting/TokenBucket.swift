// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One key's token bucket: up to `capacity` attempts at once, refilled by one every refill interval.
struct TokenBucket {
    private(set) var tokens: Double
    private(set) var updatedAt: Date

    init(capacity: Int, at now: Date) {
        self.tokens = Double(capacity)
        self.updatedAt = now
    }

    /// The tokens the bucket holds at `now`. A clock that steps backwards refills nothing.
    func tokens(at now: Date, capacity: Int, refillInterval: Double) -> Double {
        let elapsed = max(0, now.timeIntervalSince(updatedAt))
        return min(Double(capacity), tokens + elapsed / refillInterval)
    }

    /// Takes one token if there is one; otherwise returns the whole seconds until there will be: the
    /// wait to the microsecond, rounded up (RFC 9110 §10.2.3). Rounding to the microsecond first keeps
    /// floating-point error from adding a second — (1 − 59/60) × 60 is 1.0000000000000009, not 1.
    mutating func take(at now: Date, capacity: Int, refillInterval: Double) -> RateLimitDecision {
        let available = tokens(at: now, capacity: capacity, refillInterval: refillInterval)
        guard available >= 1 else {
            let microseconds = ((1 - available) * refillInterval * 1_000_000).rounded()
            let wait = (microseconds / 1_000_000).rounded(.up)
            return .limited(retryAfterSeconds: wait < Double(Int32.max) ? max(1, Int(wait)) : Int(Int32.max))
        }
        tokens = available - 1
        updatedAt = max(updatedAt, now)
        return .admitted
    }
}
