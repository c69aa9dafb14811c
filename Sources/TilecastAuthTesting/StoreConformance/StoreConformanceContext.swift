// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// What a check works with: the fresh store, the records it makes and the way it fails.
struct StoreConformanceContext: Sendable {
    let store: any GrantStore
    let check: String
    let concurrency: Int
    let fixture = StoreFixture()

    /// Fails the check unless `condition` holds.
    func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else { throw StoreConformanceFailure(check: check, message: message()) }
    }

    /// Fails the check unless `value` is present.
    func unwrap<Value>(_ value: Value?, _ message: @autoclosure () -> String) throws -> Value {
        guard let value else { throw StoreConformanceFailure(check: check, message: message()) }
        return value
    }

    /// Fails unless `operation` throws: what a store does with a call it must refuse as an error.
    func requireThrows(_ what: String, _ operation: () async throws -> Void) async throws {
        do {
            try await operation()
        } catch {
            return
        }
        throw StoreConformanceFailure(check: check, message: "\(what) did not throw")
    }

    /// Stores `issuance` through `GrantStore.createGrant(_:)`, requiring it to be created.
    func create(_ issuance: GrantIssuance) async throws {
        let outcome = try await store.createGrant(issuance)
        try require(outcome == .created, "createGrant returned \(outcome) for a grant of an unrevoked account")
    }

    /// Rotates `presented`, requiring `current` to be the grant's current token, to a fresh successor at
    /// `now`; returns the outcome and the successor and access token it tried to store.
    func rotate(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        of grant: GrantID,
        at now: Date
    ) async throws -> (outcome: RefreshRotation, successor: RefreshToken, accessToken: AccessToken) {
        let (successor, accessToken) = fixture.rotation(of: grant, at: now)
        let outcome = try await store.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            at: now
        )
        return (outcome, successor, accessToken)
    }

    /// A stored grant whose first refresh token was rotated once, at the fixture's `t0`: the grant, the
    /// digest of the rotated token and its successor.
    func grantRotatedOnce() async throws -> (issuance: GrantIssuance, rotated: SecretDigest, successor: RefreshToken) {
        let issuance = fixture.issuance()
        try await create(issuance)
        let rotated = try unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
        let (outcome, successor, _) = try await rotate(
            rotated,
            replacing: rotated,
            of: issuance.grant.id,
            at: fixture.t0
        )
        try require(outcome == .rotated, "rotating a fresh grant's first token returned \(outcome)")
        return (issuance, rotated, successor)
    }

    /// Runs `operation` from `concurrency` tasks at once and returns every result.
    func concurrently<Result: Sendable>(
        _ operation: @escaping @Sendable (Int) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: Result.self) { group in
            for index in 0..<concurrency {
                group.addTask { try await operation(index) }
            }
            var results: [Result] = []
            for try await result in group {
                results.append(result)
            }
            return results
        }
    }
}
