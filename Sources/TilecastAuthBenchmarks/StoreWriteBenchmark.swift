// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// The latency of single writes to the in-memory store — each a `createGrant` of a grant, its access and
/// refresh tokens and its session, the records an exchange adds — into a store reserved for all of them
/// and, side by side, into one created without a size that grows as it goes.
///
/// A median hides what this is about: a write that is the first to touch a page of the store's memory
/// waits, inside the store's lock, while the kernel backs the page (and, on a virtual machine, often while
/// the host backs it too). A reserved store takes those waits when it is created; a growing one takes
/// them in its writes, and every request behind the lock waits with them. So the result is the tail:
/// the 99th and 99.9th percentiles and the slowest write.
///
/// The growing store is measured twice. Back to back, its writes make new records faster than a virtual
/// machine's host backs memory, and no preparation ahead of need can keep up. Paced — a write every
/// ``pacedIntervalMicroseconds``, 50,000 grants a second, far beyond any rate of sign-ins — the store's background
/// preparation (a table's next chunk and its next index, made resident off the lock) has the time it
/// needs, as it would in a server.
public enum StoreWriteBenchmark: Sendable {
    /// Percentiles of single writes, in µs.
    public struct Latencies: Sendable {
        public var median: Double
        public var p99: Double
        public var p999: Double
        public var maximum: Double
    }

    public struct Result: Sendable {
        /// Writes into `InMemoryGrantStore(clients:expectedLiveGrants:)` sized for all of them.
        public var reserved: Latencies
        /// Writes into `InMemoryGrantStore(clients:)`, back to back.
        public var grown: Latencies
        /// Writes into `InMemoryGrantStore(clients:)`, one every ``StoreWriteBenchmark/pacedIntervalMicroseconds``.
        public var grownPaced: Latencies
        /// How long creating the reserved store took, in ms: where its pages were backed.
        public var reservationMilliseconds: Double
        /// Writes per store.
        public var writes: Int
    }

    /// The interval between the paced writes, in µs.
    public static let pacedIntervalMicroseconds = 20

    public static func run(writes: Int) async throws -> Result {
        let client = Client(
            id: "tilecast-ios",
            redirectURIs: ["tilecast-ios://oauth/callback"],
            allowedScopeTokens: ["tiles:read"]
        )
        let issuances = makeIssuances(writes)
        let reservationStart = DispatchTime.now().uptimeNanoseconds
        let reserved = InMemoryGrantStore(clients: [client], expectedLiveGrants: writes)
        let reservation = Double(DispatchTime.now().uptimeNanoseconds - reservationStart) / 1_000_000
        let reservedLatencies = try await time(issuances, into: reserved)
        let grown = InMemoryGrantStore(clients: [client])
        let grownLatencies = try await time(issuances, into: grown)
        let paced = InMemoryGrantStore(clients: [client])
        let pacedLatencies = try await time(issuances, into: paced, everyMicroseconds: pacedIntervalMicroseconds)
        return Result(
            reserved: reservedLatencies,
            grown: grownLatencies,
            grownPaced: pacedLatencies,
            reservationMilliseconds: reservation,
            writes: writes
        )
    }

    /// Times each write of `issuances` into `store`: back to back, or each starting `interval` µs after
    /// the one before (waiting by reading the clock, so that no sleep's wake-up lands in a write).
    private static func time(
        _ issuances: [GrantIssuance],
        into store: InMemoryGrantStore,
        everyMicroseconds interval: Int? = nil
    ) async throws -> Latencies {
        var nanoseconds: [UInt64] = []
        nanoseconds.reserveCapacity(issuances.count)
        var due = DispatchTime.now().uptimeNanoseconds
        for issuance in issuances {
            if let interval {
                due += UInt64(interval) * 1_000
                while DispatchTime.now().uptimeNanoseconds < due {}
            }
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome = try await store.createGrant(issuance)
            nanoseconds.append(DispatchTime.now().uptimeNanoseconds - start)
            precondition(outcome == .created, "every benchmark grant is created")
        }
        nanoseconds.sort()
        func percentile(_ fraction: Double) -> Double {
            Double(nanoseconds[min(nanoseconds.count - 1, Int(Double(nanoseconds.count) * fraction))]) / 1_000
        }
        return Latencies(
            median: percentile(0.5),
            p99: percentile(0.99),
            p999: percentile(0.999),
            maximum: Double(nanoseconds.last ?? 0) / 1_000
        )
    }

    /// `count` issuances with fresh random digests, as an exchange would mint them.
    private static func makeIssuances(_ count: Int) -> [GrantIssuance] {
        let random = SystemRandomSource()
        let now = Date()
        func digest() -> SecretDigest {
            withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { bytes in
                random.fill(bytes)
                return SecretDigest(bytes: UnsafeRawBufferPointer(bytes))!
            }
        }
        let scope = Scope("tiles:read")!
        return (0..<count).map { _ in
            let id = GrantID(rawValue: UUID())
            let refresh = RefreshToken(digest: digest(), grant: id, issuedAt: now, expiresAt: now + 86_400)
            let access = AccessToken(digest: digest(), grant: id, issuedAt: now, expiresAt: now + 3_600)
            let session = StudioSession(digest: digest(), grant: id, startedAt: now, expiresAt: now + 86_400)
            let grant = Grant(
                id: id,
                client: "tilecast-ios",
                account: "account-1",
                scope: scope,
                createdAt: now,
                expiresAt: now + 30 * 86_400,
                currentRefreshToken: refresh.digest,
                session: session.digest
            )
            return GrantIssuance(grant: grant, accessToken: access, refreshToken: refresh, session: session)
        }
    }
}
