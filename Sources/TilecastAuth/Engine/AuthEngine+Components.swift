// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The calls an exchange and the checks on later requests make to the engine's components.
///
/// Each goes straight to the in-memory component's operation when the engine has that one — it takes a
/// lock and returns, so there is nothing to wait for — and through the protocol otherwise. An `async`
/// call through an existential allocated a frame in the task for the callee and, on return, asked the
/// task for its executor again: four of each per code exchange, for components that never suspend.
/// Marked `@inline(__always)`, so that the choice costs no call of its own.
extension AuthEngine {
    @inline(__always)
    func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision {
        if let limiter = inMemoryRateLimiter {
            return limiter.admitNow(key, at: now)
        }
        return try await rateLimiter.admit(key, at: now)
    }

    @inline(__always)
    func status(of account: AccountID) async throws -> AccountStatus {
        if let directory = inMemoryAccounts {
            return directory.statusNow(of: account)
        }
        return try await accounts.status(of: account)
    }

    @inline(__always)
    func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        if let memory = inMemoryStore {
            return memory.authorizationCodeNow(digest)
        }
        return try await store.authorizationCode(digest)
    }

    @inline(__always)
    func redeemCode(_ redemption: PlannedRedemption, at now: Date) async throws -> CodeRedemption {
        if let memory = inMemoryStore {
            return try memory.redeemCodeNow(redemption.code, issuing: redemption.issuance, at: now)
        }
        return try await store.redeemCode(redemption.code, issuing: redemption.issuance, at: now)
    }

    @inline(__always)
    func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        if let memory = inMemoryStore {
            return memory.refreshTokenNow(digest)
        }
        return try await store.refreshToken(digest)
    }

    @inline(__always)
    func rotate(_ rotation: PlannedRotation, at now: Date) async throws -> RefreshRotation {
        if let memory = inMemoryStore {
            return try memory.rotateRefreshTokenNow(rotation, startingSession: nil, at: now)
        }
        return try await store.rotateRefreshToken(
            rotation.presented,
            replacing: rotation.current,
            successor: rotation.successor,
            accessToken: rotation.accessToken,
            at: now
        )
    }

    @inline(__always)
    func rotate(
        _ rotation: PlannedRotation,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        if let memory = inMemoryStore {
            return try memory.rotateRefreshTokenNow(rotation, startingSession: session, at: now)
        }
        return try await store.rotateRefreshToken(
            rotation.presented,
            replacing: rotation.current,
            successor: rotation.successor,
            accessToken: rotation.accessToken,
            startingSession: session,
            at: now
        )
    }

    @inline(__always)
    func replaceSession(with session: StudioSession, at now: Date) async throws -> SessionReplacement {
        if let memory = inMemoryStore {
            return try memory.replaceSessionNow(of: session.grant, with: session, at: now)
        }
        return try await store.replaceSession(of: session.grant, with: session, at: now)
    }

    @inline(__always)
    func revokeGrant(_ grant: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        if let memory = inMemoryStore {
            return memory.revokeGrantNow(grant, reason: reason, at: now)
        }
        return try await store.revokeGrant(grant, reason: reason, at: now)
    }

    @inline(__always)
    func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        if let memory = inMemoryStore {
            return memory.sessionNow(digest)
        }
        return try await store.session(digest)
    }

    @inline(__always)
    func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        if let memory = inMemoryStore {
            return memory.accessTokenNow(digest)
        }
        return try await store.accessToken(digest)
    }
}
