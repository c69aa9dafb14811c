// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    static let sessionChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("replaceSession ends the earlier session and stores the new one") { context in
            let store = context.store
            let fixture = context.fixture
            let issuance = fixture.issuance()
            try await context.create(issuance)
            let first = try context.unwrap(issuance.session, "fixture without a session")
            let now = fixture.t0.addingTimeInterval(30)
            let next = fixture.session(of: issuance.grant.id, at: now)
            let outcome = try await store.replaceSession(of: issuance.grant.id, with: next, at: now)
            try context.require(outcome == .replaced(previous: first.digest), "replaceSession returned \(outcome)")
            let old = try await store.session(first.digest)
            try context.require(
                old == nil || old?.grant.session != first.digest,
                "the replaced session is still the grant's session"
            )
            let new = try await store.session(next.digest)
            try context.require(new?.session == next, "the new session reads back as \(String(describing: new))")
            try context.require(new?.grant.session == next.digest, "the grant does not point at the new session")

            let bare = fixture.issuance(session: false)
            try await context.create(bare)
            let firstSession = fixture.session(of: bare.grant.id, at: now)
            let started = try await store.replaceSession(of: bare.grant.id, with: firstSession, at: now)
            try context.require(started == .replaced(previous: nil), "a grant's first session returned \(started)")
        },

        StoreConformanceCheck("replaceSession refuses a grant that is unknown, revoked or expired, and writes nothing")
        { context in
            let store = context.store
            let fixture = context.fixture
            let unknown = fixture.session(of: fixture.grantID(), at: fixture.t0)
            let outcome = try await store.replaceSession(of: unknown.grant, with: unknown, at: fixture.t0)
            try context.require(outcome == .grantNotLive, "an unknown grant returned \(outcome)")
            try context.require(try await store.session(unknown.digest) == nil, "the refused session was stored")

            let issuance = fixture.issuance(lifetime: 600)
            try await context.create(issuance)
            let late = fixture.session(of: issuance.grant.id, at: issuance.grant.expiresAt)
            let expired = try await store.replaceSession(
                of: issuance.grant.id,
                with: late,
                at: issuance.grant.expiresAt
            )
            try context.require(expired == .grantNotLive, "an expired grant returned \(expired)")

            _ = try await store.revokeGrant(issuance.grant.id, reason: .signedOut, at: fixture.t0)
            let after = fixture.session(of: issuance.grant.id, at: fixture.t0)
            let revoked = try await store.replaceSession(of: issuance.grant.id, with: after, at: fixture.t0)
            try context.require(revoked == .grantNotLive, "a revoked grant returned \(revoked)")
            for session in [late, after] {
                try context.require(try await store.session(session.digest) == nil, "a refused session was stored")
            }
        },
    ]
}
