// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// A limiter that, asked to admit, waits up to `patience` for the store to be called, notes whether it
/// was, and then answers `decision`: it shows whether a lookup overlapped the admission.
private final class LookupWatchingLimiter: RateLimiter, Sendable {
    let decision: RateLimitDecision
    let patience: Duration
    let store = Mutex<FaultInjectingStore?>(nil)
    let sawLookup = Mutex<[Bool]>([])

    init(decision: RateLimitDecision, patience: Duration) {
        self.decision = decision
        self.patience = patience
    }

    func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
        guard let store = store.withLock({ $0 }) else { return decision }
        let before = store.callCount
        let deadline = ContinuousClock.now.advanced(by: patience)
        while store.callCount == before, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        let saw = store.callCount > before
        sawLookup.withLock { $0.append(saw) }
        return decision
    }
}

/// The engine's read-ahead (``GrantStore/overlapsLookupsWithAdmission``): the presented code or token is
/// looked up while the rate limiter decides, and every answer stays the one §4's order gives.
struct ReadAheadTests {
    @Test("A store that asks for it gets its lookup while the limiter decides; the exchange and refresh succeed")
    func lookupOverlapsAdmission() async throws {
        let limiter = LookupWatchingLimiter(decision: .admitted, patience: .seconds(10))
        let harness = try Harness(rateLimiter: limiter, readsAhead: true)
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        limiter.store.withLock { $0 = harness.faults }

        let exchange = await harness.exchange(code: code, verifier: verifier)
        #expect(exchange.status == 200)
        let refreshToken = try #require(exchange.credential?["refresh_token"] as? String)
        #expect(await harness.refresh(refreshToken).status == 200)
        #expect(limiter.sawLookup.withLock { $0 } == [true, true])
        // The code was looked up once: a replay is still a replay.
        #expect(await harness.exchange(code: code, verifier: verifier).status == 400)
    }

    @Test("A store that does not ask for it is not called before the limiter answers")
    func noReadAheadByDefault() async throws {
        let limiter = LookupWatchingLimiter(decision: .admitted, patience: .milliseconds(300))
        let harness = try Harness(rateLimiter: limiter)
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        limiter.store.withLock { $0 = harness.faults }

        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
        #expect(limiter.sawLookup.withLock { $0 } == [false])
    }

    @Test("Reading ahead, a limited request is refused for its limit whatever its body, and the store is unchanged")
    func limitedComesFirst() async throws {
        let limiter = LookupWatchingLimiter(decision: .limited(retryAfterSeconds: 7), patience: .zero)
        let harness = try Harness(rateLimiter: limiter, readsAhead: true)
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let before = harness.memory.snapshot()

        let valid = await harness.exchange(code: code, verifier: verifier)
        #expect(valid.status == 429)
        #expect(valid.response.headers["Retry-After"] == "7")
        #expect(await harness.post(text: "{").status == 429)
        #expect(await harness.post(text: "{}", headers: ["Content-Type": "text/plain"]).status == 429)
        #expect(await harness.refresh("tcr_unknown").status == 429)
        #expect(harness.memory.snapshot() == before)
    }

    @Test("Reading ahead, a failed lookup is a 503 once admitted, and nothing when the limiter refuses")
    func failedLookupAhead() async throws {
        let admitting = try Harness(readsAhead: true)
        let verifier = admitting.newVerifier()
        let code = try await admitting.issueCode(verifier: verifier)
        admitting.faults.failNext(.authorizationCode)
        #expect(await admitting.exchange(code: code, verifier: verifier).status == 503)
        #expect(await admitting.exchange(code: code, verifier: verifier).status == 200)

        let limiter = LookupWatchingLimiter(decision: .limited(retryAfterSeconds: 3), patience: .zero)
        let limited = try Harness(rateLimiter: limiter, readsAhead: true)
        let other = limited.newVerifier()
        let otherCode = try await limited.issueCode(verifier: other)
        limited.faults.failNext(.authorizationCode)
        #expect(await limited.exchange(code: otherCode, verifier: other).status == 429)
    }
}
