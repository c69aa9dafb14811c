// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules T-2 and L-1: 429 with Retry-After, decided before the store is touched.
struct RateLimitTests {
    @Test("Past the limit a peer gets 429 with Retry-After in seconds, and the store is untouched")
    func limited() async throws {
        let harness = try Harness(rateLimiter: InMemoryRateLimiter(capacity: 2, refillInterval: 30))
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        #expect(await harness.refresh("example").status == 400)
        #expect(await harness.refresh("example").status == 400)
        let before = harness.memory.snapshot()

        let limited = await harness.exchange(code: code, verifier: verifier)
        #expect(limited.status == 429)
        #expect(limited.errorCode == "slow_down")
        #expect(limited.response.headers["Retry-After"] == "30")
        #expect(limited.hasNoStoreJSONHeaders)
        #expect(limited.setCookies.isEmpty)
        #expect(harness.memory.snapshot() == before)
        #expect(harness.observer.events.contains { $0.kind == .rateLimited })

        // Another peer is not limited; the first one is again once a token has come back.
        let other = await harness.post(
            body: Array("{}".utf8),
            headers: ["Content-Type": "application/json"],
            peer: "192.0.2.99"
        )
        #expect(other.status == 400)
        harness.clock.advance(by: 30)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
    }

    @Test("A limited request is not counted")
    func limitedNotCounted() async throws {
        let limiter = InMemoryRateLimiter(capacity: 1, refillInterval: 10)
        let key = RateLimitKey.peer("198.51.100.1")
        let start = Date(timeIntervalSince1970: 0)
        #expect(try await limiter.admit(key, at: start) == .admitted)
        #expect(try await limiter.admit(key, at: start.addingTimeInterval(1)) == .limited(retryAfterSeconds: 9))
        #expect(try await limiter.admit(key, at: start.addingTimeInterval(9)) == .limited(retryAfterSeconds: 1))
        #expect(try await limiter.admit(key, at: start.addingTimeInterval(10)) == .admitted)
    }

    @Test("The limiter forgets full buckets and keeps at most its key budget")
    func boundedMemory() async throws {
        let limiter = InMemoryRateLimiter(capacity: 5, refillInterval: 1, maximumTrackedKeys: 100)
        let start = Date(timeIntervalSince1970: 0)
        for index in 0..<1000 {
            _ = try await limiter.admit(RateLimitKey(rawValue: "k\(index)"), at: start)
        }
        #expect(limiter.trackedKeyCount <= 101)
        // An hour on, every earlier bucket has refilled; the next sweep (after 1024 admissions) forgets them.
        for second in 0..<1024 {
            _ = try await limiter.admit(
                RateLimitKey(rawValue: "later"),
                at: start.addingTimeInterval(3600 + Double(second))
            )
        }
        #expect(limiter.trackedKeyCount == 1)
    }

    @Test(
        "Peer addresses are keyed by IPv4 address or IPv6 /64",
        arguments: [
            ("192.0.2.7", "ip:192.0.2.7"),
            ("192.0.2.7:5555", "ip:192.0.2.7"),
            ("2001:db8:1:2:3:4:5:6", "ip6:2001:db8:1:2::/64"),
            ("[2001:db8:1:2::9]:443", "ip6:2001:db8:1:2::/64"),
            ("2001:db8:1:2:ffff::1", "ip6:2001:db8:1:2::/64"),
            ("::ffff:192.0.2.7", "ip:192.0.2.7"),
            // IPv4 inside IPv6 is keyed as IPv4, or every NAT64 or SIIT client would share one bucket.
            ("64:ff9b::192.0.2.7", "ip:192.0.2.7"),
            ("64:ff9b::c633:6409", "ip:198.51.100.9"),
            ("[64:ff9b::203.0.113.5]:443", "ip:203.0.113.5"),
            ("::ffff:0:192.0.2.8", "ip:192.0.2.8"),
            // Only the well-known /96 is unwrapped; a longer NAT64 prefix of one's own is an IPv6 network.
            ("64:ff9b:1::c000:207", "ip6:64:ff9b:1:0::/64"),
            ("fe80::1%eth0", "ip6:fe80:0:0:0::/64"),
            ("unix:/run/socket", "peer:unix:/run/socket"),
        ]
    )
    func keys(address: String, key: String) {
        #expect(RateLimitKey.peer(address).rawValue == key)
    }

    @Test("A wider IPv6 prefix keys a whole /56 or /48 as one peer")
    func widerIPv6Prefixes() {
        #expect(RateLimitKey.peer("2001:db8:1:2ff::9", ipv6PrefixLength: 56).rawValue == "ip6:2001:db8:1:200::/56")
        #expect(
            RateLimitKey.peer("2001:db8:1:2ff::9", ipv6PrefixLength: 56)
                == RateLimitKey.peer("2001:db8:1:200::1", ipv6PrefixLength: 56)
        )
        #expect(RateLimitKey.peer("2001:db8:1:ffff::9", ipv6PrefixLength: 48).rawValue == "ip6:2001:db8:1:0::/48")
        #expect(RateLimitKey.peer("64:ff9b::192.0.2.7", ipv6PrefixLength: 48).rawValue == "ip:192.0.2.7")
        #expect(throws: ConfigurationError.ipv6PrefixLengthOutOfRange) {
            try EngineConfiguration(rateLimitIPv6PrefixLength: 65).validate()
        }
    }

    @Test("The engine keys IPv6 peers by the configured prefix")
    func engineUsesConfiguredPrefix() async throws {
        let harness = try Harness(
            configuration: EngineConfiguration(rateLimitIPv6PrefixLength: 56),
            rateLimiter: InMemoryRateLimiter(capacity: 1, refillInterval: 3600)
        )
        #expect(await harness.post(body: Array("{}".utf8), peer: "2001:db8:1:201::1").status == 400)
        #expect(await harness.post(body: Array("{}".utf8), peer: "2001:db8:1:2fe::7").status == 429)
        #expect(await harness.post(body: Array("{}".utf8), peer: "2001:db8:1:300::7").status == 400)
    }

    @Test("Requests without a peer address share one key")
    func unknownPeer() {
        #expect(RateLimitKey.peer(nil) == RateLimitKey.peer(""))
    }

    @Test("A custom limiter's Retry-After is clamped to at least one second")
    func retryAfterClamped() async throws {
        struct ZeroLimiter: RateLimiter {
            func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
                .limited(retryAfterSeconds: -5)
            }
        }
        let harness = try Harness(rateLimiter: ZeroLimiter())
        let response = await harness.post(text: "{}")
        #expect(response.status == 429)
        #expect(response.response.headers["Retry-After"] == "1")
    }

    @Test("A failing limiter fails closed with 503 and changes nothing")
    func limiterFailure() async throws {
        struct BrokenLimiter: RateLimiter {
            struct Down: Error {}
            func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision { throw Down() }
        }
        let harness = try Harness(rateLimiter: BrokenLimiter())
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let before = harness.memory.snapshot()
        let response = await harness.exchange(code: code, verifier: verifier)
        #expect(response.status == 503)
        #expect(harness.memory.snapshot() == before)
    }
}
