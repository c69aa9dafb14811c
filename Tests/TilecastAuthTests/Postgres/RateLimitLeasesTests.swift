// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Testing

@testable import TilecastAuthPostgres

/// One instance's table of leases (`PostgresRateLimiter`, "Leases"), without a server.
struct RateLimitLeasesTests {
    @Test("A key and its canonically equivalent spelling are two keys, as they are two rows on the server")
    func keysAreTheirBytes() {
        var leases = RateLimitLeases()
        let precomposed = Array("caf\u{E9}".utf8)
        let decomposed = Array("cafe\u{301}".utf8)
        leases.record(precomposed, granted: 5, at: 0, lifetime: 0.25)
        let byTheOtherSpelling = leases.admitFromLease(decomposed, at: 0.1)
        #expect(!byTheOtherSpelling)
        #expect(leases.attemptsToAsk(decomposed, at: 0.1, lifetime: 0.25, most: 32) == 1)
        let byItsOwnSpelling = leases.admitFromLease(precomposed, at: 0.1)
        #expect(byItsOwnSpelling)
    }

    @Test("A lease admits what it was granted, within its lifetime only, and asks for twice what it admitted")
    func aLeaseWithinItsLifetime() {
        var leases = RateLimitLeases()
        let key = Array("peer:192.0.2.1".utf8)
        leases.record(key, granted: 3, at: 10, lifetime: 0.25)
        let beforeTheRoundTrip = leases.admitFromLease(key, at: 9.99)
        #expect(!beforeTheRoundTrip, "before the round trip's time: a clock stepping back")
        let firstLeased = leases.admitFromLease(key, at: 10.1)
        #expect(firstLeased)
        let secondLeased = leases.admitFromLease(key, at: 10.25)
        #expect(secondLeased)
        let thirdLeased = leases.admitFromLease(key, at: 10.25)
        #expect(!thirdLeased, "two granted beyond the round trip's own")
        #expect(leases.attemptsToAsk(key, at: 10.3, lifetime: 0.25, most: 32) == 6)
        #expect(leases.attemptsToAsk(key, at: 10.3, lifetime: 0.25, most: 4) == 4)
        #expect(leases.attemptsToAsk(key, at: 10.51, lifetime: 0.25, most: 32) == 1, "no longer recent")
        leases.record(key, granted: 3, at: 11, lifetime: 0.25)
        let pastItsLifetime = leases.admitFromLease(key, at: 11.26)
        #expect(!pastItsLifetime, "past its lifetime")
    }

    /// A new key when the table is full drops the keys no longer recent and then the leases that end
    /// first, down to three quarters: the next thousand new keys find room without a sweep.
    @Test("A full table makes room for a thousand keys at a time, and never holds more than its limit")
    func aFullTableMakesRoomInBulk() {
        var leases = RateLimitLeases()
        let limit = RateLimitLeases.keyLimit
        for index in 0..<limit {
            leases.record(Array("key-\(index)".utf8), granted: 2, at: Double(index) / 1_000_000, lifetime: 1)
        }
        #expect(leases.byKey.count == limit)
        leases.record(Array("new-0".utf8), granted: 2, at: 0.5, lifetime: 1)
        #expect(leases.byKey.count == limit * 3 / 4 + 1)
        // The leases kept are those ending last; the first recorded were dropped.
        #expect(leases.byKey[Array("key-0".utf8)] == nil)
        #expect(leases.byKey[Array("key-\(limit - 1)".utf8)] != nil)
        for index in 1...(limit / 4 - 1) {
            leases.record(Array("new-\(index)".utf8), granted: 2, at: 0.5, lifetime: 1)
        }
        #expect(leases.byKey.count == limit)
        leases.record(Array("new-last".utf8), granted: 2, at: 0.5, lifetime: 1)
        #expect(leases.byKey.count <= limit)
        #expect(leases.byKey[Array("new-last".utf8)] != nil)
    }
}
#endif
