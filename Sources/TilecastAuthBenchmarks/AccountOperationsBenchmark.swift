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
        /// Grants in the large store.
        public var largeGrants: Int
        /// Runs of each size.
        public var runs: Int
    }

    /// Accounts each run lists and then revokes, at either size: the small store's 500 accounts, each
    /// once, so that both sizes time the same work — a second revocation of an account finds nothing to
    /// revoke.
    public static let operationsPerRun = 500

    /// `runs` runs at each size, alternating: each in a fresh store of a thousand grants, and in one store
    /// of `largeGrants` grants, built once, on accounts no earlier run touched.
    public static func run(largeGrants: Int, runs: Int) async throws -> Result {
        let large = try await store(grants: largeGrants)
        var small: [(list: Double, revoke: Double)] = []
        var largeRuns: [(list: Double, revoke: Double)] = []
        for run in 0..<runs {
            small.append(try await measure(try await store(grants: 1_000), grants: 1_000, run: 0))
            largeRuns.append(try await measure(large, grants: largeGrants, run: run))
        }
        func median(_ values: [Double]) -> Double { BenchmarkMeasurement.median(of: values) }
        return Result(
            grantsOfAccount: (median(small.map(\.list)), median(largeRuns.map(\.list))),
            revokeGrants: (median(small.map(\.revoke)), median(largeRuns.map(\.revoke))),
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

    /// ``operationsPerRun`` listings and as many revocations in `store` of `grants` grants, each of an
    /// account of its own, spread over the store; run `run` takes the accounts after run `run - 1`'s.
    private static func measure(
        _ store: InMemoryGrantStore,
        grants: Int,
        run: Int
    ) async throws -> (list: Double, revoke: Double) {
        let accounts = grants / 2
        let operations = min(operationsPerRun, accounts)
        let stride = max(1, accounts / operations)
        let now = Date()
        var begin = DispatchTime.now().uptimeNanoseconds
        for index in 0..<operations {
            _ = try await store.grants(of: account((index * stride + run) % accounts))
        }
        let list = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1_000 / Double(operations)
        begin = DispatchTime.now().uptimeNanoseconds
        for index in 0..<operations {
            _ = try await store.revokeGrants(
                of: account((index * stride + run) % accounts),
                reason: .revokedByServer,
                at: now
            )
        }
        let revoke = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1_000 / Double(operations)
        return (list, revoke)
    }

    private static func account(_ number: Int) -> AccountID {
        AccountID(rawValue: "account-\(number)")
    }
}
