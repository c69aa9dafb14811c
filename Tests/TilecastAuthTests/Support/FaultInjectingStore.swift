// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
import TilecastAuth

/// Wraps a store and makes chosen operations throw, the way a database that went away would.
final class FaultInjectingStore: GrantStore, Sendable {
    enum Operation: Hashable, Sendable {
        case insertCode, authorizationCode, redeemCode, createGrant, refreshToken, rotateRefreshToken
        case replaceSession, revokeGrant, revokeGrants, accessToken, session
    }

    struct InjectedFault: Error {}

    let base: InMemoryGrantStore
    private let failing = Mutex<Set<Operation>>([])
    private let retained = Mutex<[SecretDigest: SessionLookup]>([:])

    init(_ base: InMemoryGrantStore) {
        self.base = base
    }

    /// Makes the next call of `operation` throw.
    func failNext(_ operation: Operation) {
        failing.withLock { _ = $0.insert(operation) }
    }

    /// Keeps answering `session(_:)` for `lookup` after the base store dropped it — a store that marks
    /// replaced sessions instead of deleting them.
    func retainSession(_ lookup: SessionLookup) {
        retained.withLock { $0[lookup.session.digest] = lookup }
    }

    private func check(_ operation: Operation) throws {
        if failing.withLock({ $0.remove(operation) }) != nil {
            throw InjectedFault()
        }
    }

    func client(_ id: ClientID) async throws -> Client? { try await base.client(id) }

    func insertCode(_ code: AuthorizationCode) async throws {
        try check(.insertCode)
        try await base.insertCode(code)
    }

    func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        try check(.authorizationCode)
        return try await base.authorizationCode(digest)
    }

    func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws -> CodeRedemption {
        try check(.redeemCode)
        return try await base.redeemCode(digest, issuing: issuance, at: now)
    }

    func createGrant(_ issuance: GrantIssuance) async throws {
        try check(.createGrant)
        try await base.createGrant(issuance)
    }

    func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try check(.refreshToken)
        return try await base.refreshToken(digest)
    }

    func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        try check(.rotateRefreshToken)
        return try await base.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            at: now
        )
    }

    func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws -> SessionReplacement {
        try check(.replaceSession)
        return try await base.replaceSession(of: grant, with: session, at: now)
    }

    func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        try check(.revokeGrant)
        return try await base.revokeGrant(id, reason: reason, at: now)
    }

    func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        try check(.revokeGrants)
        return try await base.revokeGrants(of: account, reason: reason, at: now)
    }

    func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        try check(.accessToken)
        return try await base.accessToken(digest)
    }

    func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        try check(.session)
        if let lookup = try await base.session(digest) {
            return lookup
        }
        guard let stale = retained.withLock({ $0[digest] }) else { return nil }
        // The session as kept, with its grant as it is now.
        guard let grant = try await base.grant(stale.grant.id) else { return nil }
        return SessionLookup(session: stale.session, grant: grant)
    }

    func grant(_ id: GrantID) async throws -> Grant? { try await base.grant(id) }

    func grants(of account: AccountID) async throws -> [Grant] { try await base.grants(of: account) }

    func removeExpired(at now: Date) async throws -> Int { try await base.removeExpired(at: now) }
}
