// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import TilecastAuth

struct TokenBucketTests {
    private let start = Date(timeIntervalSince1970: 0)

    @Test("A refused take leaves the bucket as it was")
    func refusedTakeChangesNothing() {
        var bucket = TokenBucket(capacity: 1, at: start)
        #expect(bucket.take(at: start, capacity: 1, refillInterval: 10) == .admitted)
        let empty = bucket.tokens
        #expect(
            bucket.take(at: start.addingTimeInterval(1), capacity: 1, refillInterval: 10)
                == .limited(retryAfterSeconds: 9)
        )
        #expect(bucket.tokens == empty)
        #expect(bucket.updatedAt == start)
    }

    @Test("Tokens come back one per interval, up to the capacity, and never from a clock that steps back")
    func refill() {
        var bucket = TokenBucket(capacity: 3, at: start)
        for _ in 0..<3 {
            #expect(bucket.take(at: start, capacity: 3, refillInterval: 2) == .admitted)
        }
        #expect(bucket.tokens(at: start.addingTimeInterval(-100), capacity: 3, refillInterval: 2) == 0)
        #expect(bucket.tokens(at: start.addingTimeInterval(3), capacity: 3, refillInterval: 2) == 1.5)
        #expect(bucket.tokens(at: start.addingTimeInterval(1000), capacity: 3, refillInterval: 2) == 3)
    }

    @Test("Retry-After is the wait rounded up to whole seconds, without floating-point error adding a second (L-1)")
    func retryAfterIsExact() {
        var bucket = TokenBucket(capacity: 1, at: start)
        #expect(bucket.take(at: start, capacity: 1, refillInterval: 60) == .admitted)
        // 59 s on, 59/60 of a token is back: one second to go, though (1 − 59/60) × 60 is 1.0000000000000009.
        #expect(
            bucket.take(at: start.addingTimeInterval(59), capacity: 1, refillInterval: 60)
                == .limited(retryAfterSeconds: 1)
        )
        #expect(
            bucket.take(at: start.addingTimeInterval(58.5), capacity: 1, refillInterval: 60)
                == .limited(retryAfterSeconds: 2)
        )
        for elapsed in 1..<60 {
            #expect(
                bucket.take(at: start.addingTimeInterval(Double(elapsed)), capacity: 1, refillInterval: 60)
                    == .limited(retryAfterSeconds: 60 - elapsed)
            )
        }
    }
}
