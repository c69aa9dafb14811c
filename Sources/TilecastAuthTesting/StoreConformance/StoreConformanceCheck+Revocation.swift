// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    static let revocationChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("revokeGrant revokes once, and everything of the grant shows the revocation") { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let now = fixture.t0.addingTimeInterval(10)
            let outcome = try await store.revokeGrant(issuance.grant.id, reason: .refreshTokenReused, at: now)
            let revocation = Grant.Revocation(revokedAt: now, reason: .refreshTokenReused)
            guard case .revoked(let revoked) = outcome, revoked.revocation == revocation else {
                throw StoreConformanceFailure(check: context.check, message: "revokeGrant returned \(outcome)")
            }
            let again = try await store.revokeGrant(
                issuance.grant.id,
                reason: .signedOut,
                at: now.addingTimeInterval(1)
            )
            try context.require(again == .alreadyRevoked(revoked), "a second revocation returned \(again)")

            // Every token and the session either is gone or shows the revoked grant.
            if let token = issuance.accessToken, let lookup = try await store.accessToken(token.digest) {
                try context.require(lookup.grant.revocation == revocation, "the access token's grant is not revoked")
            }
            if let token = issuance.refreshToken, let lookup = try await store.refreshToken(token.digest) {
                try context.require(lookup.grant.revocation == revocation, "the refresh token's grant is not revoked")
            }
            if let session = issuance.session, let lookup = try await store.session(session.digest) {
                try context.require(lookup.grant.revocation == revocation, "the session's grant is not revoked")
            }
        },

        StoreConformanceCheck("revokeGrant refuses unknown and expired grants") { context in
            let store = context.store
            let fixture = context.fixture
            let outcome = try await store.revokeGrant(fixture.grantID(), reason: .revokedByServer, at: fixture.t0)
            try context.require(outcome == .notFound, "an unknown grant returned \(outcome)")
            let issuance = fixture.issuance(lifetime: 600)
            try await context.create(issuance)
            let expired = try await store.revokeGrant(
                issuance.grant.id,
                reason: .revokedByServer,
                at: issuance.grant.expiresAt
            )
            try context.require(expired == .notFound, "an expired grant returned \(expired)")
            let grant = try await store.grant(issuance.grant.id)
            try context.require(grant == nil || grant?.revocation == nil, "the refused revocation was written")
        },

        StoreConformanceCheck("concurrent revocations of one grant: exactly one revokes") { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let outcomes = try await context.concurrently { _ in
                try await store.revokeGrant(issuance.grant.id, reason: .revokedByServer, at: fixture.t0)
            }
            let revoked = outcomes.filter { if case .revoked = $0 { true } else { false } }.count
            try context.require(revoked == 1, "\(revoked) of \(context.concurrency) concurrent revocations revoked")
        },

        StoreConformanceCheck("a rotation racing a revocation never leaves the grant live") { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
            let (successor, access) = fixture.rotation(of: issuance.grant.id, at: fixture.t0)
            async let rotation = store.rotateRefreshToken(
                presented,
                replacing: presented,
                successor: successor,
                accessToken: access,
                at: fixture.t0
            )
            async let revocation = store.revokeGrant(issuance.grant.id, reason: .revokedByServer, at: fixture.t0)
            let (rotated, revoked) = try await (rotation, revocation)
            guard case .revoked = revoked else {
                throw StoreConformanceFailure(check: context.check, message: "the revocation returned \(revoked)")
            }
            try context.require(rotated == .rotated || rotated == .grantNotLive, "the rotation returned \(rotated)")
            let lookup = try await store.refreshToken(successor.digest)
            try context.require(
                lookup == nil || lookup?.grant.revocation != nil,
                "the successor belongs to a live grant"
            )
        },

        StoreConformanceCheck("revokeGrants revokes every live grant of the account and nothing else") { context in
            let store = context.store
            let fixture = context.fixture
            let mine = [fixture.issuance(account: "account-1"), fixture.issuance(account: "account-1")]
            let expiredMine = fixture.issuance(account: "account-1", lifetime: 10)
            let theirs = fixture.issuance(account: "account-2")
            for issuance in mine + [expiredMine, theirs] {
                try await context.create(issuance)
            }
            let now = fixture.t0.addingTimeInterval(20)
            let revoked = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: now)
            try context.require(
                Set(revoked.map(\.id)) == Set(mine.map(\.grant.id)),
                "revokeGrants revoked \(revoked.map(\.id)), expected the two live grants"
            )
            try context.require(
                revoked.allSatisfy { $0.revocation?.revokedAt == now },
                "a returned grant is not revoked"
            )
            let other = try await store.grant(theirs.grant.id)
            try context.require(other?.revocation == nil, "another account's grant was revoked")
            let again = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: now)
            try context.require(again.isEmpty, "a second revokeGrants revoked \(again.count) grants again")
        },

        StoreConformanceCheck("grants(of:) lists an account's grants oldest first, revoked ones included") { context in
            let store = context.store
            let fixture = context.fixture
            let older = fixture.issuance(account: "account-3", at: fixture.t0)
            let newer = fixture.issuance(account: "account-3", at: fixture.t0.addingTimeInterval(60))
            try await context.create(newer)
            try await context.create(older)
            try await context.create(fixture.issuance(account: "account-4"))
            _ = try await store.revokeGrant(
                older.grant.id,
                reason: .revokedByServer,
                at: fixture.t0.addingTimeInterval(120)
            )
            let listed = try await store.grants(of: "account-3")
            try context.require(
                listed.map(\.id) == [older.grant.id, newer.grant.id],
                "grants(of:) returned \(listed.map(\.id))"
            )
            try context.require(listed.first?.revocation != nil, "the revoked grant is listed without its revocation")
        },
    ]
}
