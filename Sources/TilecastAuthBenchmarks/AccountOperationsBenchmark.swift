// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// One account's operations on `InMemoryGrantStore` — `grants(of:)`, its page of signed-in devices, and
/// `revokeGrants(of:)`, its sign-out everywhere — in a store of a thousand grants and in a large one,
/// side by side. Each runs inside the store's lock, so what it costs is also what every request arriving
/// meanwhile waits.
public enum AccountOperationsBenchmark: Sendable {
    /// Mean µs per operation, each of another account holding two grants.
    public struct Result: Sendable {
        public var grantsOfAccount: (small: Double, large: Double)
        public var revokeGrants: (small: Double, large: Double)
        /// Grants in the large store.
        public var largeGrants: Int
    }

    public static func run(largeGrants: Int, operations: Int) async throws -> Result {
        let small = try await measure(grants: 1_000, operations: min(operations, 500))
        let large = try await measure(grants: largeGrants, operations: operations)
        return Result(
            grantsOfAccount: (small.list, large.list),
            revokeGrants: (small.revoke, large.revoke),
            largeGrants: largeGrants
        )
    }

    /// A store of `grants` grants, two for each account, reserved for them; then `operations` listings
    /// and as many revocations, each of an account of its own.
    private static func measure(grants: Int, operations: Int) async throws -> (list: Double, revoke: Double) {
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
        let accounts = grants / 2
        let stride = max(1, accounts / max(1, operations))
        var begin = DispatchTime.now().uptimeNanoseconds
        for index in 0..<operations {
            _ = try await store.grants(of: account((index * stride) % accounts))
        }
        let list = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1_000 / Double(operations)
        begin = DispatchTime.now().uptimeNanoseconds
        for index in 0..<operations {
            _ = try await store.revokeGrants(
                of: account((index * stride) % accounts),
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
