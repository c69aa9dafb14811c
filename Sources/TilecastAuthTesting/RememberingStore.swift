// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import TilecastAuth

/// Wraps a `GrantStore` and remembers the codes and refresh tokens written through it, as
/// `PostgresGrantStore` does (`GrantStore`'s "Remembered records"), with the same policy: a code from its
/// insert until its redemption; a refresh token, with its grant, from the redemption, grant creation or
/// rotation that wrote it until its rotation through this store. A write that throws changes nothing
/// remembered.
///
/// Everything else another writer does — a revocation, a sign-out, a rotation through another wrapper of
/// the same store, an expiry — leaves the remembered record stale, which is the point: engines on
/// several wrappers of one in-memory store behave as several instances on one database, and every
/// answer must be the one an engine that reads every record gives.
public final class RememberingStore: GrantStore, Sendable {
    /// The wrapped store, which every call but the two remembered lookups reaches.
    public let base: any GrantStore
    private let records: RememberedRecords

    /// Wraps `base`, remembering at most `capacity` records, the latest (0 remembers none).
    public init(_ base: any GrantStore, capacity: Int = 10_000) {
        self.base = base
        self.records = RememberedRecords(capacity: capacity)
    }

    /// How many lookups were answered from memory.
    public var rememberedRecordsUsed: Int { records.used }

    /// How many remembered records a write through this store found changed since (a code used or gone,
    /// a token rotated, retired or of a grant no longer live): the stale records met.
    public var rememberedRecordsFoundStale: Int { records.foundStale }

    public func client(_ id: ClientID) async throws -> Client? {
        try await base.client(id)
    }

    public func insertCode(_ code: AuthorizationCode) async throws {
        try await base.insertCode(code)
        records.inserted(code)
    }

    public func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        try await base.authorizationCode(digest)
    }

    /// The code as it was inserted through this store, until its redemption through it.
    public func rememberedAuthorizationCode(_ digest: SecretDigest) -> AuthorizationCode? {
        records.code(digest)
    }

    public func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws -> CodeRedemption {
        let outcome = try await base.redeemCode(digest, issuing: issuance, at: now)
        records.redeemed(digest, issuing: issuance, outcome: outcome)
        return outcome
    }

    public func createGrant(_ issuance: GrantIssuance) async throws -> GrantCreation {
        let outcome = try await base.createGrant(issuance)
        records.created(issuance, outcome: outcome)
        return outcome
    }

    public func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try await base.refreshToken(digest)
    }

    /// The refresh token and its grant as a write through this store left them, until its rotation
    /// through it.
    public func rememberedRefreshToken(_ digest: SecretDigest) -> RefreshTokenLookup? {
        records.refreshToken(digest)
    }

    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        let outcome = try await base.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            at: now
        )
        records.rotation(of: presented, replacing: current, to: successor, session: nil, rotated: outcome == .rotated)
        return outcome
    }

    /// The wrapped store's rotation that starts the session with it; when it answers `nil` (it starts
    /// sessions separately), nothing was written and nothing is remembered.
    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        let outcome = try await base.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            startingSession: session,
            at: now
        )
        if let outcome {
            records.rotation(
                of: presented,
                replacing: current,
                to: successor,
                session: session.digest,
                rotated: outcome == .rotated
            )
        }
        return outcome
    }

    public func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws
        -> SessionReplacement
    {
        try await base.replaceSession(of: grant, with: session, at: now)
    }

    public func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        try await base.revokeGrant(id, reason: reason, at: now)
    }

    public func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        try await base.revokeGrants(of: account, reason: reason, at: now)
    }

    public func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        try await base.accessToken(digest)
    }

    public func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        try await base.session(digest)
    }

    public func grant(_ id: GrantID) async throws -> Grant? {
        try await base.grant(id)
    }

    public func grants(of account: AccountID) async throws -> [Grant] {
        try await base.grants(of: account)
    }

    public func removeExpired(at now: Date) async throws -> Int {
        try await base.removeExpired(at: now)
    }
}
