// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// `revokeGrants(of:reason:at:)` ends more than the grants live when it runs: a sign-in under way — a code
/// approved but not yet exchanged, a grant being created — must not complete after it (RFC 9700 §4.14.2).
extension StoreConformanceCheck {
    static let accountRevocationChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("revokeGrants ends the account's unredeemed codes, and no other account's") { context in
            let store = context.store
            let fixture = context.fixture
            let banked = fixture.code(account: "account-1", lifetime: 600)
            let redeemed = fixture.code(account: "account-1")
            let theirs = fixture.code(account: "account-2")
            for code in [banked, redeemed, theirs] {
                try await store.insertCode(code)
            }
            let first = fixture.issuance(account: "account-1")
            _ = try await store.redeemCode(redeemed.digest, issuing: first, at: fixture.t0)

            let now = fixture.t0.addingTimeInterval(5)
            _ = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: now)

            let later = now.addingTimeInterval(1)
            let refused = fixture.issuance(account: "account-1", at: later)
            let outcome = try await store.redeemCode(banked.digest, issuing: refused, at: later)
            try context.require(outcome == .notFound, "a code kept back over the revocation returned \(outcome)")
            try await requireNothingStored(refused, context)
            let replay = try await store.redeemCode(redeemed.digest, issuing: fixture.issuance(), at: later)
            try context.require(
                replay == .alreadyRedeemed(grant: first.grant.id),
                "a redeemed code of the account no longer names its grant: \(replay)"
            )
            let other = try await store.redeemCode(
                theirs.digest,
                issuing: fixture.issuance(account: "account-2"),
                at: later
            )
            try context.require(other == .redeemed, "another account's code returned \(other)")
        },

        StoreConformanceCheck("a code issued at or before its account's revocation never redeems, even stored after it")
        { context in
            let store = context.store
            let fixture = context.fixture
            let revokedAt = fixture.t0.addingTimeInterval(5)
            _ = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: revokedAt)
            // Pruning within the ten minutes a code can live must keep the record of the revocation.
            _ = try await store.removeExpired(at: revokedAt.addingTimeInterval(300))

            let now = revokedAt.addingTimeInterval(301)
            for issuedAt in [fixture.t0, revokedAt] {
                let code = fixture.code(account: "account-1", issuedAt: issuedAt, lifetime: 600)
                try await store.insertCode(code)
                let issuance = fixture.issuance(account: "account-1", at: now)
                let outcome = try await store.redeemCode(code.digest, issuing: issuance, at: now)
                try context.require(
                    outcome == .notFound,
                    "a code issued \(revokedAt.timeIntervalSince(issuedAt)) s before the revocation returned \(outcome)"
                )
                try await requireNothingStored(issuance, context)
            }
            let fresh = fixture.code(account: "account-1", issuedAt: revokedAt.addingTimeInterval(1), lifetime: 600)
            try await store.insertCode(fresh)
            let outcome = try await store.redeemCode(fresh.digest, issuing: fixture.issuance(at: now), at: now)
            try context.require(outcome == .redeemed, "a code issued after the revocation returned \(outcome)")
        },

        StoreConformanceCheck("createGrant refuses a grant created at or before its account's revocation") { context in
            let store = context.store
            let fixture = context.fixture
            let revokedAt = fixture.t0.addingTimeInterval(10)
            _ = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: revokedAt)
            // An instance whose clock is behind revokes again, earlier: the later revocation stands.
            _ = try await store.revokeGrants(of: "account-1", reason: .revokedByServer, at: fixture.t0)
            for createdAt in [fixture.t0.addingTimeInterval(5), revokedAt] {
                let issuance = fixture.issuance(account: "account-1", at: createdAt)
                let outcome = try await store.createGrant(issuance)
                try context.require(
                    outcome == .accountRevoked,
                    "a grant created \(revokedAt.timeIntervalSince(createdAt)) s before the revocation returned \(outcome)"
                )
                try await requireNothingStored(issuance, context)
            }
            // A grant stored after the revocation whose sign-in was authenticated before it: a device
            // approved with the old password, polling after the password changed.
            var approvedBefore = fixture.issuance(account: "account-1", at: revokedAt.addingTimeInterval(60))
            approvedBefore.authenticatedAt = revokedAt.addingTimeInterval(-1)
            let late = try await store.createGrant(approvedBefore)
            try context.require(
                late == .accountRevoked,
                "a sign-in authenticated before the revocation returned \(late)"
            )
            try await requireNothingStored(approvedBefore, context)
            try await context.create(fixture.issuance(account: "account-1", at: revokedAt.addingTimeInterval(1)))
            try await context.create(fixture.issuance(account: "account-2", at: fixture.t0))
        },

        StoreConformanceCheck("a redemption or creation racing its account's revocation is refused or revoked") {
            context in
            let store = context.store
            let fixture = context.fixture
            for round in 0..<context.concurrency {
                let now = fixture.t0.addingTimeInterval(Double(round))
                let code = fixture.code(account: "account-1", issuedAt: now)
                try await store.insertCode(code)
                let redeemed = fixture.issuance(account: "account-1", at: now)
                let created = fixture.issuance(account: "account-1", at: now)
                async let redemption = store.redeemCode(code.digest, issuing: redeemed, at: now)
                async let creation = store.createGrant(created)
                async let revocation = store.revokeGrants(of: "account-1", reason: .revokedByServer, at: now)
                let (redemptionOutcome, creationOutcome, revoked) = try await (redemption, creation, revocation)
                let revokedIDs = Set(revoked.map(\.id))

                switch redemptionOutcome {
                case .redeemed:
                    try context.require(
                        revokedIDs.contains(redeemed.grant.id),
                        "round \(round): a code redeemed before the revocation left its grant live"
                    )
                case .notFound:
                    try await requireNothingStored(redeemed, context)
                case .alreadyRedeemed:
                    throw StoreConformanceFailure(check: context.check, message: "round \(round): \(redemptionOutcome)")
                }
                switch creationOutcome {
                case .created:
                    try context.require(
                        revokedIDs.contains(created.grant.id),
                        "round \(round): a grant created before the revocation was left live"
                    )
                case .accountRevoked:
                    try await requireNothingStored(created, context)
                }
                let live = try await store.grants(of: "account-1").filter { $0.revocation == nil }
                try context.require(live.isEmpty, "round \(round): \(live.count) grants of the account are live")
            }
        },
    ]
}
