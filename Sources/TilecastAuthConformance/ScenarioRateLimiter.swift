// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// The scenarios' rate limiter: an in-memory token bucket whose next call can be made to fail.
final class ScenarioRateLimiter: RateLimiter, Sendable {
    private struct Failure: Error, CustomStringConvertible {
        var description: String { "injected failure of the rate limiter" }
    }

    private let limiter: InMemoryRateLimiter
    private let failNextCall = LockedValue(false)

    init(capacity: Int, refillSeconds: Double) {
        self.limiter = InMemoryRateLimiter(capacity: capacity, refillInterval: refillSeconds)
    }

    func failNext() {
        failNextCall.withLock { $0 = true }
    }

    func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
        let fail = failNextCall.withLock { state -> Bool in
            defer { state = false }
            return state
        }
        if fail {
            throw Failure()
        }
        return try await limiter.admit(key, at: now)
    }
}
