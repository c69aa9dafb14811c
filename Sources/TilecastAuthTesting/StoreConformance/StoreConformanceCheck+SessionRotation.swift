// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    /// `rotateRefreshToken(_:replacing:successor:accessToken:startingSession:at:)`: a store that answers it
    /// rotates and starts the session together or does neither; one that answers `nil` writes nothing.
    static let sessionRotationChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck(
            "rotateRefreshToken(startingSession:) rotates and starts the session together, or answers nil and writes nothing"
        ) { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken, "fixture without a refresh token")
            let earlier = try context.unwrap(issuance.session, "fixture without a session")
            let now = fixture.t0.addingTimeInterval(60)
            let (successor, access) = fixture.rotation(of: issuance.grant.id, at: now)
            let session = fixture.session(of: issuance.grant.id, at: now)
            let before = try await store.grant(issuance.grant.id)
            let outcome = try await store.rotateRefreshToken(
                presented.digest,
                replacing: presented.digest,
                successor: successor,
                accessToken: access,
                startingSession: session,
                at: now
            )
            guard let outcome else {
                // A store that starts sessions separately: the engine makes the two calls instead.
                try await context.requireUnchanged(
                    issuance,
                    before: before,
                    after: "an answer of nil",
                    successor,
                    access,
                    session
                )
                return
            }
            try context.require(outcome == .rotated, "the rotation starting a session returned \(outcome)")
            let grant = try await context.requireRotated(presented.digest, to: successor, with: access, at: now)
            try context.require(grant.session == session.digest, "the grant does not point at the new session")
            let started = try await store.session(session.digest)
            try context.require(
                started?.session == session,
                "the new session reads back as \(String(describing: started))"
            )
            let ended = try await store.session(earlier.digest)
            try context.require(
                ended == nil || ended?.grant.session != earlier.digest,
                "the earlier session is still the grant's session"
            )
        },

        StoreConformanceCheck(
            "rotateRefreshToken(startingSession:) refuses as a rotation does and then starts no session"
        ) { context in
            let store = context.store
            let fixture = context.fixture
            // Superseded: the presented token was rotated already.
            let (rotatedOnce, stale, _) = try await context.grantRotatedOnce()
            let (successor, access) = fixture.rotation(of: rotatedOnce.grant.id, at: fixture.t0)
            let session = fixture.session(of: rotatedOnce.grant.id, at: fixture.t0)
            let beforeStale = try await store.grant(rotatedOnce.grant.id)
            let superseded = try await store.rotateRefreshToken(
                stale,
                replacing: stale,
                successor: successor,
                accessToken: access,
                startingSession: session,
                at: fixture.t0
            )
            if let superseded {
                guard case .superseded = superseded else {
                    throw StoreConformanceFailure(
                        check: context.check,
                        message: "a stale rotation returned \(superseded)"
                    )
                }
            }
            try await context.requireUnchanged(
                rotatedOnce,
                before: beforeStale,
                after: "a stale rotation",
                successor,
                access,
                session
            )

            // Unknown token.
            let unknownGrant = fixture.grantID()
            let (unknownSuccessor, unknownAccess) = fixture.rotation(of: unknownGrant, at: fixture.t0)
            let unknownSession = fixture.session(of: unknownGrant, at: fixture.t0)
            let unknown = fixture.digest()
            let notFound = try await store.rotateRefreshToken(
                unknown,
                replacing: unknown,
                successor: unknownSuccessor,
                accessToken: unknownAccess,
                startingSession: unknownSession,
                at: fixture.t0
            )
            try context.require(
                notFound == nil || notFound == .notFound,
                "an unknown token returned \(String(describing: notFound))"
            )
            try context.require(
                try await store.session(unknownSession.digest) == nil,
                "a refused rotation stored its session"
            )

            // A grant at its expiry, then revoked.
            let issuance = fixture.issuance(lifetime: 600)
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
            for (label, now) in [("expired", issuance.grant.expiresAt), ("revoked", fixture.t0)] {
                if label == "revoked" {
                    _ = try await store.revokeGrant(issuance.grant.id, reason: .revokedByServer, at: fixture.t0)
                }
                let (late, lateAccess) = fixture.rotation(of: issuance.grant.id, at: now)
                let lateSession = fixture.session(of: issuance.grant.id, at: now)
                let before = try await store.grant(issuance.grant.id)
                let refused = try await store.rotateRefreshToken(
                    presented,
                    replacing: presented,
                    successor: late,
                    accessToken: lateAccess,
                    startingSession: lateSession,
                    at: now
                )
                try context.require(
                    refused == nil || refused == .grantNotLive,
                    "a rotation of an \(label) grant returned \(String(describing: refused))"
                )
                try await context.requireUnchanged(
                    issuance,
                    before: before,
                    after: "a rotation of an \(label) grant",
                    late,
                    lateAccess,
                    lateSession
                )
            }

            // A successor, access token and session of another grant than the presented token's: not found,
            // before any other refusal, and neither grant changes.
            let own = fixture.issuance()
            let other = fixture.issuance()
            try await context.create(own)
            try await context.create(other)
            let ownToken = try context.unwrap(own.refreshToken?.digest, "fixture without a refresh token")
            let (foreign, foreignAccess) = fixture.rotation(of: other.grant.id, at: fixture.t0)
            let foreignSession = fixture.session(of: other.grant.id, at: fixture.t0)
            try await context.requireRefusedAsNotFound(
                "a rotation naming another grant than the presented token's",
                presenting: ownToken,
                of: [own, other],
                successor: foreign,
                access: foreignAccess,
                session: foreignSession
            )
            let (rotated, staleOwn, _) = try await context.grantRotatedOnce()
            try await context.requireRefusedAsNotFound(
                "a superseded rotation naming another grant",
                presenting: staleOwn,
                of: [rotated],
                successor: foreign,
                access: foreignAccess,
                session: foreignSession
            )
            let (ownSuccessor, _) = fixture.rotation(of: own.grant.id, at: fixture.t0)
            try await context.requireRefusedAsNotFound(
                "a rotation with another grant's access token",
                presenting: ownToken,
                of: [own],
                successor: ownSuccessor,
                access: foreignAccess,
                session: fixture.session(of: own.grant.id, at: fixture.t0)
            )
        },

        StoreConformanceCheck(
            "rotateRefreshToken(startingSession:) racing the grant's revocation: a rotation it answers started its session"
        ) { context in
            let store = context.store
            let fixture = context.fixture
            // Two calls would leave a gap in which the revocation lands: rotated, and the session refused.
            for round in 0..<(4 * context.concurrency) {
                let now = fixture.t0.addingTimeInterval(Double(round))
                let issuance = fixture.issuance(at: now)
                try await context.create(issuance)
                let presented = try context.unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
                let (successor, access) = fixture.rotation(of: issuance.grant.id, at: now)
                let session = fixture.session(of: issuance.grant.id, at: now)
                async let rotation = store.rotateRefreshToken(
                    presented,
                    replacing: presented,
                    successor: successor,
                    accessToken: access,
                    startingSession: session,
                    at: now
                )
                async let revocation = store.revokeGrant(issuance.grant.id, reason: .revokedByServer, at: now)
                let (outcome, _) = try await (rotation, revocation)
                guard let outcome else { return }
                switch outcome {
                case .rotated:
                    let started = try await store.session(session.digest)
                    try context.require(
                        started?.session == session && started?.grant.session == session.digest,
                        "round \(round): rotated, but the session it was to start is not the grant's"
                    )
                case .grantNotLive:
                    try await context.requireUnchanged(
                        issuance,
                        before: issuance.grant,
                        after: "round \(round): a rotation of a revoked grant",
                        successor,
                        access,
                        session
                    )
                default:
                    throw StoreConformanceFailure(check: context.check, message: "round \(round): \(outcome)")
                }
            }
        },
    ]
}

extension StoreConformanceContext {
    /// Requires what a rotation of `presented` to `successor` and `access` at `now` leaves: the presented
    /// token rotated to the successor, the successor and the access token stored, the grant's current
    /// token moved. Returns the grant as it now stands.
    func requireRotated(
        _ presented: SecretDigest,
        to successor: RefreshToken,
        with access: AccessToken,
        at now: Date
    ) async throws -> Grant {
        let old = try unwrap(try await store.refreshToken(presented), "the rotated token vanished")
        try require(
            old.token.state == .rotated(rotatedAt: now, successor: successor.digest),
            "the rotated token's state is \(old.token.state)"
        )
        let new = try unwrap(try await store.refreshToken(successor.digest), "the successor is missing")
        try require(new.token == successor, "the successor reads back as \(new.token)")
        try require(new.grant.currentRefreshToken == successor.digest, "the grant's current token did not move")
        let accessLookup = try await store.accessToken(access.digest)
        try require(
            accessLookup?.token == access,
            "the new access token reads back as \(String(describing: accessLookup))"
        )
        return new.grant
    }

    /// Requires that the rotation of `issuance`'s grant that would have stored `successor`, `access` and
    /// `session` wrote none of them and left the grant as `before` had it: its current token and its
    /// session, still stored — a refused rotation ends no session either.
    /// Presents `presented` with a session asked for, and requires `nil` or `.notFound` with nothing
    /// written to the grants of `issuances`: for a successor, access token or session that names another
    /// grant than the presented token's.
    func requireRefusedAsNotFound(
        _ what: String,
        presenting presented: SecretDigest,
        of issuances: [GrantIssuance],
        successor: RefreshToken,
        access: AccessToken,
        session: StudioSession
    ) async throws {
        var before: [Grant?] = []
        for issuance in issuances {
            before.append(try await store.grant(issuance.grant.id))
        }
        let outcome = try await store.rotateRefreshToken(
            presented,
            replacing: presented,
            successor: successor,
            accessToken: access,
            startingSession: session,
            at: fixture.t0
        )
        try require(outcome == nil || outcome == .notFound, "\(what) returned \(String(describing: outcome))")
        for (issuance, grant) in zip(issuances, before) {
            try await requireUnchanged(issuance, before: grant, after: what, successor, access, session)
        }
    }

    func requireUnchanged(
        _ issuance: GrantIssuance,
        before: Grant?,
        after what: String,
        _ successor: RefreshToken,
        _ access: AccessToken,
        _ session: StudioSession
    ) async throws {
        try require(try await store.refreshToken(successor.digest) == nil, "\(what) stored its successor")
        try require(try await store.accessToken(access.digest) == nil, "\(what) stored its access token")
        try require(try await store.session(session.digest) == nil, "\(what) stored its session")
        let grant = try await store.grant(issuance.grant.id)
        try require(grant?.session == before?.session, "\(what) changed the grant's session")
        try require(
            grant?.currentRefreshToken == before?.currentRefreshToken,
            "\(what) changed the grant's current token"
        )
        if let earlier = before?.session {
            try require(
                try await store.session(earlier)?.grant.session == earlier,
                "\(what) ended the grant's session"
            )
        }
    }
}
