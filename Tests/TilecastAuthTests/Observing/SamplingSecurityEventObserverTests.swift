// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// A flood of refused requests must not flood the log: every rate-limited request used to raise two
/// events, passed on one by one.
struct SamplingSecurityEventObserverTests {
    @Test("A flood of rate-limited requests reaches the log as its first events and one count per window")
    func floodIsSampled() async throws {
        let clock = ManualTimeSource()
        let log = RecordingObserver()
        let sampler = SamplingSecurityEventObserver(wrapping: log, window: .seconds(60), timeSource: clock)
        let harness = try Harness(rateLimiter: InMemoryRateLimiter(capacity: 1, refillInterval: 3600))
        let engine = try AuthEngine(
            store: harness.memory,
            accounts: harness.accounts,
            rateLimiter: InMemoryRateLimiter(capacity: 1, refillInterval: 3600),
            observer: sampler,
            timeSource: clock
        )
        let request = EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json"],
            body: Array("{}".utf8),
            peerAddress: "192.0.2.66"
        )
        for _ in 0..<1_001 {
            _ = await engine.handle(request: request)
        }
        // The first request is refused as malformed (400); the next 1,000 are rate-limited (429), each
        // raising rateLimited and requestRefused.
        #expect(log.events.count == 3)
        #expect(log.events.filter { $0.kind == .rateLimited }.count == 1)
        #expect(log.refusals.count == 2)

        clock.advance(by: 61)
        _ = await engine.handle(request: request)
        let suppressed = log.events.compactMap { event -> (String, Int)? in
            event.kind == .eventsSuppressed ? (event.suppressedKind ?? "", event.suppressedCount ?? 0) : nil
        }
        #expect(suppressed.count == 2)
        #expect(suppressed.contains { $0 == ("rateLimited", 999) })
        #expect(suppressed.contains { $0 == ("requestRefused 429 slow_down", 999) })
    }

    @Test("Replays, reuse and revocations always pass, however many")
    func criticalEventsAlwaysPass() {
        let log = RecordingObserver()
        let sampler = SamplingSecurityEventObserver(wrapping: log, timeSource: ManualTimeSource())
        let grant = GrantID(rawValue: UUID())
        for _ in 0..<50 {
            sampler.observe(.refreshTokenReuseDetected(grant: grant, peerAddress: nil))
            sampler.observe(.codeReplayDetected(grant: grant, peerAddress: nil))
            sampler.observe(.grantRevoked(grant: grant, reason: .refreshTokenReused))
        }
        #expect(log.events.count == 150)
    }

    @Test("Each sort of refusal passes its first; flush reports what was held back")
    func flushReportsCounts() {
        let clock = ManualTimeSource()
        let log = RecordingObserver()
        let sampler = SamplingSecurityEventObserver(wrapping: log, eventsPerWindow: 2, timeSource: clock)
        let malformed = EndpointError(.malformedBody(detail: "x"))
        let unknownCode = EndpointError(.codeNotFound)
        for _ in 0..<5 {
            sampler.observe(.requestRefused(malformed, peerAddress: "192.0.2.1"))
            sampler.observe(.requestRefused(unknownCode, peerAddress: "192.0.2.1"))
        }
        #expect(log.refusals.count == 4)
        sampler.flush()
        let counts = log.events.compactMap { $0.kind == .eventsSuppressed ? $0.suppressedCount : nil }
        #expect(counts == [3, 3])
        sampler.flush()
        #expect(log.events.count == 6)
        // A clock stepped back starts a new window rather than stretching the old one.
        clock.advance(by: -5)
        sampler.observe(.requestRefused(malformed, peerAddress: "192.0.2.1"))
        #expect(log.refusals.count == 5)
    }
}
