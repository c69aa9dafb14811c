// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// One account's operations on `InMemoryGrantStore` — `grants(of:)`, its page of signed-in devices, and
/// `revokeGrants(of:)`, its sign-out everywhere — in a store of a thousand grants and in a large one,
/// side by side. Each runs inside the store's lock, so what it costs is also what every request arriving
/// meanwhile waits.
public enum AccountOperationsBenchmark: Sendable {
    /// µs per operation, each of another account holding two grants: the median over the runs of each
    /// run's mean.
    public struct Result: Sendable {
        public var grantsOfAccount: (small: Double, large: Double)
        public var revokeGrants: (small: Double, large: Double)
        /// The large store against the small one as the median of the runs' ratios (each run times both
        /// stores interleaved), for `grants(of:)` and for `revokeGrants(of:)`.
        public var pairedRatios: (grantsOfAccount: Double, revokeGrants: Double)
        /// Grants in the large store.
        public var largeGrants: Int
        /// Runs of each size.
        public var runs: Int
    }

    /// Accounts each run lists and then revokes, at either size: the small store's 500 accounts, each
    /// once, so that both sizes time the same work — a second revocation of an account finds nothing to
    /// revoke.
    public static let operationsPerRun = 500

    /// Operations of one store timed before the other store's turn (``measure(_:)``).
    static let slice = 50

    /// `runs` runs at each size, each timing both sizes interleaved: a fresh store of a thousand grants,
    /// and one store of `largeGrants` grants, built once, on accounts no earlier run touched.
    public static func run(largeGrants: Int, runs: Int) async throws -> Result {
        let large = try await store(grants: largeGrants)
        var small: [(list: Double, revoke: Double)] = []
        var largeRuns: [(list: Double, revoke: Double)] = []
        for run in 0..<runs {
            let times = try await measure([
                (try await store(grants: 1_000), accounts(grants: 1_000, run: 0)),
                (large, accounts(grants: largeGrants, run: run)),
            ])
            small.append(times[0])
            largeRuns.append(times[1])
        }
        func median(_ values: [Double]) -> Double { BenchmarkMeasurement.median(of: values) }
        return Result(
            grantsOfAccount: (median(small.map(\.list)), median(largeRuns.map(\.list))),
            revokeGrants: (median(small.map(\.revoke)), median(largeRuns.map(\.revoke))),
            pairedRatios: (
                median(zip(largeRuns, small).map { $0.list / $1.list }),
                median(zip(largeRuns, small).map { $0.revoke / $1.revoke })
            ),
            largeGrants: largeGrants,
            runs: runs
        )
    }

    /// A store of `grants` grants, two for each account, reserved for them.
    private static func store(grants: Int) async throws -> InMemoryGrantStore {
        let store = InMemoryGrantStore(clients: BenchmarkWorld.clients, expectedLiveGrants: grants)
        let now = Date()
        for number in 0..<grants {
            let grant = Grant(
                id: GrantID(rawValue: UUID()),
                client: .tilecastIOS,
                account: account(number / 2),
                scope: Scope("profile")!,
                createdAt: now,
                expiresAt: now.addingTimeInterval(86_400),
                currentRefreshToken: nil,
                session: nil
            )
            _ = try await store.createGrant(
                GrantIssuance(grant: grant, accessToken: nil, refreshToken: nil, session: nil)
            )
        }
        return store
    }

    /// The accounts one run lists and revokes in a store of `grants` grants: ``operationsPerRun`` of
    /// them, each of its own, spread over the store; run `run` takes the accounts after run `run - 1`'s.
    /// Made before the timing starts, so that the timed loops do only the store's work.
    private static func accounts(grants: Int, run: Int) -> [AccountID] {
        let accounts = grants / 2
        let operations = min(operationsPerRun, accounts)
        let stride = max(1, accounts / operations)
        return (0..<operations).map { index in account((index * stride + run) % accounts) }
    }

    /// Times the listings of each store's accounts and then their revocations, the stores interleaved:
    /// ``slice`` operations of one, then of the next, the order reversed every other turn, so that a
    /// change of the machine's speed within the run falls on every store alike. µs per operation, for
    /// each store in order.
    private static func measure(
        _ stores: [(store: InMemoryGrantStore, accounts: [AccountID])]
    ) async throws -> [(list: Double, revoke: Double)] {
        let now = Date()
        let longest = stores.map(\.accounts.count).max() ?? 0
        func interleaved(_ operation: (InMemoryGrantStore, AccountID) async throws -> Void) async rethrows -> [Double] {
            var nanoseconds = [UInt64](repeating: 0, count: stores.count)
            for (turn, first) in Swift.stride(from: 0, to: longest, by: slice).enumerated() {
                for position in turn.isMultiple(of: 2) ? Array(stores.indices) : stores.indices.reversed() {
                    let (store, accounts) = stores[position]
                    let begin = DispatchTime.now().uptimeNanoseconds
                    for account in accounts[min(first, accounts.count)..<min(first + slice, accounts.count)] {
                        try await operation(store, account)
                    }
                    nanoseconds[position] += DispatchTime.now().uptimeNanoseconds - begin
                }
            }
            return stores.indices.map { Double(nanoseconds[$0]) / 1_000 / Double(max(1, stores[$0].accounts.count)) }
        }
        let list = try await interleaved { store, account in _ = try await store.grants(of: account) }
        let revoke = try await interleaved { store, account in
            _ = try await store.revokeGrants(of: account, reason: .revokedByServer, at: now)
        }
        return Array(zip(list, revoke))
    }

    private static func account(_ number: Int) -> AccountID {
        AccountID(rawValue: "account-\(number)")
    }
}
