// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// A record whose key — a code's, token's or session's digest, a grant's id — is already stored is a
/// caller's mistake (every key is a fresh random value): the store throws and writes nothing, as
/// PostgreSQL's unique keys make it do, rather than replace the stored record. A store that replaced it
/// would hand one grant's session, token or code to another.
extension StoreConformanceCheck {
    static let keyChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("insertCode refuses a code whose digest is stored: it throws and the stored code stays") {
            context in
            let stored = context.fixture.code(account: "account-1")
            try await context.store.insertCode(stored)
            var other = context.fixture.code(account: "account-2")
            other.digest = stored.digest
            try await context.requireThrows("insertCode with a stored code's digest") {
                try await context.store.insertCode(other)
            }
            let read = try await context.store.authorizationCode(stored.digest)
            try context.require(read == stored, "the stored code reads back as \(String(describing: read))")
        },

        StoreConformanceCheck(
            "createGrant refuses an issuance naming a stored grant id, token or session: it throws and writes nothing"
        ) { context in
            for key in IssuanceKey.allCases {
                let stored = context.fixture.issuance(account: "account-1")
                try await context.create(stored)
                let other = key.reusing(stored, in: context.fixture.issuance(account: "account-2"))
                try await context.requireThrows("createGrant naming the stored \(key)") {
                    _ = try await context.store.createGrant(other)
                }
                try await requireIssuanceStored(stored, context)
                try await requireNothingStored(other, except: key, context)
            }
        },

        StoreConformanceCheck(
            "redeemCode refuses an issuance naming a stored grant id, token or session: it throws, writes nothing, and the code stays unredeemed"
        ) { context in
            for key in IssuanceKey.allCases {
                let stored = context.fixture.issuance(account: "account-1")
                try await context.create(stored)
                let code = context.fixture.code(account: "account-2")
                try await context.store.insertCode(code)
                let other = key.reusing(stored, in: context.fixture.issuance(account: "account-2"))
                try await context.requireThrows("redeemCode naming the stored \(key)") {
                    _ = try await context.store.redeemCode(code.digest, issuing: other, at: context.fixture.t0)
                }
                try await requireIssuanceStored(stored, context)
                try await requireNothingStored(other, except: key, context)
                let read = try await context.store.authorizationCode(code.digest)
                try context.require(read == code, "the code reads back as \(String(describing: read))")
            }
        },

        StoreConformanceCheck(
            "rotateRefreshToken refuses a successor or access token whose digest is stored: it throws and writes nothing"
        ) { context in
            for key in [IssuanceKey.refreshToken, .accessToken] {
                try await requireRotationRefused(reusing: key, startingSession: false, context)
            }
        },

        StoreConformanceCheck(
            "rotateRefreshToken(startingSession:) refuses a successor, access token or session whose digest is stored: it throws and writes nothing"
        ) { context in
            for key in [IssuanceKey.refreshToken, .accessToken, .session] {
                try await requireRotationRefused(reusing: key, startingSession: true, context)
            }
        },

        StoreConformanceCheck(
            "rotateRefreshToken, and rotateRefreshToken(startingSession:), refuse a leeway retry naming a stale successor as superseded before looking at any key"
        ) { context in
            // The retry's own refusal comes first, as every refusal an outcome reports does: a store that
            // looked at the keys first would throw where the other answers .superseded.
            let stored = context.fixture.issuance(account: "account-1")
            try await context.create(stored)
            let (issuance, first, second) = try await context.grantRotatedOnce()
            let later = context.fixture.t0.addingTimeInterval(1)
            let (third, _, _) = try await context.rotate(
                second.digest,
                replacing: second.digest,
                of: issuance.grant.id,
                at: later
            )
            try context.require(third == .rotated, "rotating the successor returned \(third)")
            let current = try context.unwrap(try await context.store.grant(issuance.grant.id), "the grant vanished")
            let now = later.addingTimeInterval(1)
            var (successor, accessToken) = context.fixture.rotation(of: issuance.grant.id, at: now)
            successor.digest = try context.unwrap(stored.refreshToken, "no token").digest
            accessToken.digest = try context.unwrap(stored.accessToken, "no token").digest
            var session = context.fixture.session(of: issuance.grant.id, at: now)
            session.digest = try context.unwrap(stored.session, "no session").digest
            let replacing = try context.unwrap(current.currentRefreshToken, "the grant has no current token")
            // `first` was rotated to `second`, not to the grant's current token.
            let outcome = try await context.store.rotateRefreshToken(
                first,
                replacing: replacing,
                successor: successor,
                accessToken: accessToken,
                at: now
            )
            guard case .superseded = outcome else {
                throw StoreConformanceFailure(check: context.check, message: "the stale retry returned \(outcome)")
            }
            let combined = try await context.store.rotateRefreshToken(
                first,
                replacing: replacing,
                successor: successor,
                accessToken: accessToken,
                startingSession: session,
                at: now
            )
            if let combined, case .superseded = combined {
            } else if let combined {
                throw StoreConformanceFailure(
                    check: context.check,
                    message: "the stale retry starting a session returned \(combined)"
                )
            }
            try await requireIssuanceStored(stored, context)
            let after = try await context.store.grant(issuance.grant.id)
            try context.require(after == current, "the grant changed: \(String(describing: after))")
        },

        StoreConformanceCheck(
            "replaceSession refuses a session whose digest is another grant's: it throws and both sessions stay"
        ) { context in
            let stored = context.fixture.issuance(account: "account-1")
            try await context.create(stored)
            let issuance = context.fixture.issuance(account: "account-2")
            try await context.create(issuance)
            var session = context.fixture.session(of: issuance.grant.id, at: context.fixture.t0)
            session.digest = try context.unwrap(stored.session, "fixture without a session").digest
            try await context.requireThrows("replaceSession with another grant's session digest") {
                _ = try await context.store.replaceSession(of: issuance.grant.id, with: session, at: context.fixture.t0)
            }
            try await requireIssuanceStored(stored, context)
            try await requireIssuanceStored(issuance, context)
        },
    ]

    /// Rotates a new grant's first token to a successor, access token or session (by `key`) that has the
    /// digest of the same record of another stored grant — starting the session in the same call when
    /// `startingSession` is set — and fails unless the call throws and writes nothing. A store that starts
    /// sessions separately may answer `nil` to the combined call instead, having written nothing.
    static func requireRotationRefused(
        reusing key: IssuanceKey,
        startingSession: Bool,
        _ context: StoreConformanceContext
    ) async throws {
        let (stored, issuance, rotation) = try await rotationReusing(key, context)
        do {
            let answer: RefreshRotation?
            if startingSession {
                answer = try await context.store.rotateRefreshToken(
                    rotation.presented,
                    replacing: rotation.presented,
                    successor: rotation.successor,
                    accessToken: rotation.accessToken,
                    startingSession: rotation.session,
                    at: rotation.now
                )
                try context.require(
                    answer == nil,
                    "rotateRefreshToken(startingSession:) naming the stored \(key) answered \(String(describing: answer))"
                )
            } else {
                answer = try await context.store.rotateRefreshToken(
                    rotation.presented,
                    replacing: rotation.presented,
                    successor: rotation.successor,
                    accessToken: rotation.accessToken,
                    at: rotation.now
                )
                throw StoreConformanceFailure(
                    check: context.check,
                    message: "rotateRefreshToken naming the stored \(key) answered \(String(describing: answer))"
                )
            }
        } catch let failure as StoreConformanceFailure {
            throw failure
        } catch {
            // Refused, as it must be.
        }
        try await requireIssuanceStored(stored, context)
        try await requireIssuanceStored(issuance, context)
        try await requireRotationUnstored(rotation, except: key, context)
    }

    /// A rotation of a new grant's first token whose successor, access token or session (by `key`) has
    /// the digest of the same record of another stored grant; both grants as stored.
    static func rotationReusing(
        _ key: IssuanceKey,
        _ context: StoreConformanceContext
    ) async throws -> (stored: GrantIssuance, issuance: GrantIssuance, rotation: KeyReusingRotation) {
        let stored = context.fixture.issuance(account: "account-1")
        try await context.create(stored)
        let issuance = context.fixture.issuance(account: "account-2")
        try await context.create(issuance)
        let presented = try context.unwrap(issuance.refreshToken, "fixture without a refresh token").digest
        let now = context.fixture.t0.addingTimeInterval(1)
        var (successor, accessToken) = context.fixture.rotation(of: issuance.grant.id, at: now)
        var session = context.fixture.session(of: issuance.grant.id, at: now)
        switch key {
        case .refreshToken: successor.digest = try context.unwrap(stored.refreshToken, "no token").digest
        case .accessToken: accessToken.digest = try context.unwrap(stored.accessToken, "no token").digest
        case .session: session.digest = try context.unwrap(stored.session, "no session").digest
        case .grant: break
        }
        let rotation = KeyReusingRotation(
            presented: presented,
            successor: successor,
            accessToken: accessToken,
            session: session,
            now: now
        )
        return (stored, issuance, rotation)
    }

    /// Fails if a record of `rotation` other than the one under `key` (which names a record already
    /// stored) was stored.
    static func requireRotationUnstored(
        _ rotation: KeyReusingRotation,
        except key: IssuanceKey,
        _ context: StoreConformanceContext
    ) async throws {
        let store = context.store
        if key != .refreshToken {
            try context.require(
                try await store.refreshToken(rotation.successor.digest) == nil,
                "a refused rotation stored its successor"
            )
        }
        if key != .accessToken {
            try context.require(
                try await store.accessToken(rotation.accessToken.digest) == nil,
                "a refused rotation stored its access token"
            )
        }
        if key != .session {
            try context.require(
                try await store.session(rotation.session.digest) == nil,
                "a refused rotation stored its session"
            )
        }
    }

    /// Fails if any record of `issuance` other than the one under `key` (which names a record already
    /// stored) was stored.
    static func requireNothingStored(
        _ issuance: GrantIssuance,
        except key: IssuanceKey,
        _ context: StoreConformanceContext
    ) async throws {
        var rest = issuance
        switch key {
        case .grant: break
        case .accessToken: rest.accessToken = nil
        case .refreshToken: rest.refreshToken = nil
        case .session: rest.session = nil
        }
        if key == .grant {
            // The grant's id reads back as the stored grant; the rest must not be there.
            rest.grant.id = context.fixture.grantID()
        }
        try await requireNothingStored(rest, context)
    }
}

/// The keys of a grant's issuance, each of which a caller could name twice.
enum IssuanceKey: CaseIterable, CustomStringConvertible {
    case grant, accessToken, refreshToken, session

    var description: String {
        switch self {
        case .grant: "grant id"
        case .accessToken: "access token"
        case .refreshToken: "refresh token"
        case .session: "session"
        }
    }

    /// `issuance` with this key taken from `stored`: the grant's id (on the grant and every record of
    /// it), or the digest of one of its records (on the grant too, where it names it).
    func reusing(_ stored: GrantIssuance, in issuance: GrantIssuance) -> GrantIssuance {
        var issuance = issuance
        switch self {
        case .grant:
            let id = stored.grant.id
            issuance.grant.id = id
            issuance.accessToken?.grant = id
            issuance.refreshToken?.grant = id
            issuance.session?.grant = id
        case .accessToken:
            issuance.accessToken?.digest = stored.accessToken!.digest
        case .refreshToken:
            issuance.refreshToken?.digest = stored.refreshToken!.digest
            issuance.grant.currentRefreshToken = stored.refreshToken!.digest
        case .session:
            issuance.session?.digest = stored.session!.digest
            issuance.grant.session = stored.session!.digest
        }
        return issuance
    }
}

/// What ``StoreConformanceCheck/rotationReusing(_:_:)`` asks a store to write.
struct KeyReusingRotation {
    let presented: SecretDigest
    let successor: RefreshToken
    let accessToken: AccessToken
    let session: StudioSession
    let now: Date
}
