// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    static let rotationChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("rotateRefreshToken rotates the current token") { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken, "fixture without a refresh token")
            let now = fixture.t0.addingTimeInterval(60)
            let (successor, access) = fixture.rotation(of: issuance.grant.id, at: now)
            let outcome = try await store.rotateRefreshToken(
                presented.digest,
                replacing: presented.digest,
                successor: successor,
                accessToken: access,
                at: now
            )
            try context.require(outcome == .rotated, "rotateRefreshToken returned \(outcome)")
            _ = try await context.requireRotated(presented.digest, to: successor, with: access, at: now)
        },

        StoreConformanceCheck("rotating from a token that is no longer current is superseded and writes nothing") {
            context in
            let (issuance, rotated, first) = try await context.grantRotatedOnce()
            let (outcome, second, secondAccess) = try await context.rotate(
                rotated,
                replacing: rotated,
                of: issuance.grant.id,
                at: context.fixture.t0
            )
            guard case .superseded(let current) = outcome else {
                throw StoreConformanceFailure(check: context.check, message: "a stale rotation returned \(outcome)")
            }
            try context.require(current.grant.currentRefreshToken == first.digest, "superseded reported a stale grant")
            try context.require(
                try await context.store.refreshToken(second.digest) == nil,
                "a refused rotation stored its successor"
            )
            try context.require(
                try await context.store.accessToken(secondAccess.digest) == nil,
                "a refused rotation stored its access token"
            )
        },

        StoreConformanceCheck("rotateRefreshToken refuses unknown tokens and grants that are revoked or expired") {
            context in
            let store = context.store
            let fixture = context.fixture
            let (successor, access) = fixture.rotation(of: fixture.grantID(), at: fixture.t0)
            let unknown = fixture.digest()
            let outcome = try await store.rotateRefreshToken(
                unknown,
                replacing: unknown,
                successor: successor,
                accessToken: access,
                at: fixture.t0
            )
            try context.require(outcome == .notFound, "an unknown token returned \(outcome)")

            let issuance = fixture.issuance(lifetime: 600)
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
            let (late, lateAccess) = fixture.rotation(of: issuance.grant.id, at: issuance.grant.expiresAt)
            let expired = try await store.rotateRefreshToken(
                presented,
                replacing: presented,
                successor: late,
                accessToken: lateAccess,
                at: issuance.grant.expiresAt
            )
            try context.require(expired == .grantNotLive, "a rotation at the grant's expiry returned \(expired)")

            _ = try await store.revokeGrant(issuance.grant.id, reason: .revokedByServer, at: fixture.t0)
            let (next, nextAccess) = fixture.rotation(of: issuance.grant.id, at: fixture.t0)
            let revoked = try await store.rotateRefreshToken(
                presented,
                replacing: presented,
                successor: next,
                accessToken: nextAccess,
                at: fixture.t0
            )
            try context.require(revoked == .grantNotLive, "a rotation of a revoked grant returned \(revoked)")
            for digest in [late.digest, next.digest] {
                try context.require(
                    try await store.refreshToken(digest) == nil,
                    "a refused rotation stored its successor"
                )
            }
        },

        StoreConformanceCheck("a retry within the leeway replaces the successor, which is retired") { context in
            let store = context.store
            let (issuance, presented, first) = try await context.grantRotatedOnce()
            let retryAt = context.fixture.t0.addingTimeInterval(5)
            let (outcome, second, _) = try await context.rotate(
                presented,
                replacing: first.digest,
                of: issuance.grant.id,
                at: retryAt
            )
            try context.require(outcome == .rotated, "the leeway retry returned \(outcome)")
            let old = try await store.refreshToken(presented)
            try context.require(
                old?.token.state == .rotated(rotatedAt: context.fixture.t0, successor: second.digest),
                "the presented token's state is \(String(describing: old?.token.state)); its rotatedAt must not move"
            )
            let retired = try await store.refreshToken(first.digest)
            try context.require(
                retired?.token.state == .retired(retiredAt: retryAt),
                "the replaced successor's state is \(String(describing: retired?.token.state))"
            )
            try context.require(
                old?.grant.currentRefreshToken == second.digest,
                "the grant's current token is not the new successor"
            )
        },

        StoreConformanceCheck("a leeway retry whose successor is no longer current is superseded") { context in
            let (issuance, presented, first) = try await context.grantRotatedOnce()
            let t0 = context.fixture.t0
            _ = try await context.rotate(first.digest, replacing: first.digest, of: issuance.grant.id, at: t0)
            // `presented` is two generations back: its successor `first` is no longer current.
            let (outcome, third, _) = try await context.rotate(
                presented,
                replacing: first.digest,
                of: issuance.grant.id,
                at: t0
            )
            guard case .superseded = outcome else {
                throw StoreConformanceFailure(
                    check: context.check,
                    message: "an older generation's retry returned \(outcome)"
                )
            }
            try context.require(
                try await context.store.refreshToken(third.digest) == nil,
                "a refused retry stored its successor"
            )
        },

        StoreConformanceCheck("a leeway retry whose successor was removed as expired is superseded, writing nothing") {
            context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
            // A successor that expires a minute on, long before the token it replaced and the grant.
            let shortLived = RefreshToken(
                digest: fixture.digest(),
                grant: issuance.grant.id,
                issuedAt: fixture.t0,
                expiresAt: fixture.t0.addingTimeInterval(60)
            )
            let (_, access) = fixture.rotation(of: issuance.grant.id, at: fixture.t0)
            let first = try await store.rotateRefreshToken(
                presented,
                replacing: presented,
                successor: shortLived,
                accessToken: access,
                at: fixture.t0
            )
            try context.require(first == .rotated, "rotating a fresh grant's first token returned \(first)")
            // Ten minutes on: the successor has long expired, the token before it and the grant have not.
            let later = fixture.t0.addingTimeInterval(600)
            _ = try await store.removeExpired(at: later)
            // A store may keep an expired record longer still; then the successor is there to retire, and
            // the retry rotates.
            let kept = try await store.refreshToken(shortLived.digest) != nil
            // Otherwise the grant still names the removed token as current, and a retry from the token
            // before it has no successor to retire.
            let (outcome, retried, retriedAccess) = try await context.rotate(
                presented,
                replacing: shortLived.digest,
                of: issuance.grant.id,
                at: later
            )
            if kept {
                try context.require(outcome == .rotated, "a retry whose successor is stored returned \(outcome)")
                return
            }
            guard case .superseded = outcome else {
                throw StoreConformanceFailure(
                    check: context.check,
                    message: "a retry whose successor's record is gone returned \(outcome)"
                )
            }
            try context.require(
                try await store.refreshToken(retried.digest) == nil,
                "a refused retry stored its successor"
            )
            try context.require(
                try await store.accessToken(retriedAccess.digest) == nil,
                "a refused retry stored its access token"
            )
            let after = try await store.refreshToken(presented)
            try context.require(
                after?.token.state == .rotated(rotatedAt: fixture.t0, successor: shortLived.digest),
                "a refused retry changed the presented token to \(String(describing: after?.token.state))"
            )
            try context.require(
                after?.grant.currentRefreshToken == shortLived.digest,
                "a refused retry moved the grant's current token"
            )
        },

        StoreConformanceCheck("concurrent rotations of one token: exactly one succeeds") { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let presented = try context.unwrap(issuance.refreshToken?.digest, "fixture without a refresh token")
            let rotations = (0..<context.concurrency).map { _ in fixture.rotation(of: issuance.grant.id, at: fixture.t0)
            }
            let outcomes = try await context.concurrently { index in
                try await store.rotateRefreshToken(
                    presented,
                    replacing: presented,
                    successor: rotations[index].0,
                    accessToken: rotations[index].1,
                    at: fixture.t0
                )
            }
            let winners = outcomes.filter { $0 == .rotated }.count
            try context.require(winners == 1, "\(winners) of \(context.concurrency) concurrent rotations succeeded")
            var stored = 0
            for (successor, _) in rotations where try await store.refreshToken(successor.digest) != nil {
                stored += 1
            }
            try context.require(stored == 1, "\(stored) successors were stored for one rotation")
        },
    ]
}
