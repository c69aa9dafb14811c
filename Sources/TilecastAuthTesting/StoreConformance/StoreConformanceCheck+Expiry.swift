// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    static let expiryChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("removeExpired removes what has expired and keeps everything still needed") { context in
            let store = context.store
            let fixture = context.fixture
            let unused = fixture.code(lifetime: 60)
            let redeemedCode = fixture.code(lifetime: 60)
            try await store.insertCode(unused)
            try await store.insertCode(redeemedCode)
            let issuance = fixture.issuance(lifetime: 7200)
            _ = try await store.redeemCode(redeemedCode.digest, issuing: issuance, at: fixture.t0)
            let presented = try context.unwrap(issuance.refreshToken, "fixture without a refresh token")
            let (successor, access) = fixture.rotation(of: issuance.grant.id, at: fixture.t0)
            _ = try await store.rotateRefreshToken(
                presented.digest,
                replacing: presented.digest,
                successor: successor,
                accessToken: access,
                at: fixture.t0
            )

            // 20 minutes on: the unused code and the first access tokens have expired; the redeemed code
            // (its grant lives), the rotated refresh token (until its own expiry), the successor and the
            // session have not.
            let later = fixture.t0.addingTimeInterval(1200)
            _ = try await store.removeExpired(at: later)
            try context.require(
                try await store.authorizationCode(unused.digest) == nil,
                "an expired unused code was kept"
            )
            if let token = issuance.accessToken {
                try context.require(
                    try await store.accessToken(token.digest) == nil,
                    "an expired access token was kept"
                )
            }
            try context.require(
                try await store.authorizationCode(redeemedCode.digest) != nil,
                "a redeemed code of a live grant was removed"
            )
            try context.require(
                try await store.refreshToken(presented.digest) != nil,
                "a rotated refresh token was removed before its own expiry"
            )
            try context.require(
                try await store.refreshToken(successor.digest) != nil,
                "a live refresh token was removed"
            )
            if let session = issuance.session {
                try context.require(try await store.session(session.digest) != nil, "a live session was removed")
            }
            try context.require(try await store.grant(issuance.grant.id) != nil, "a live grant was removed")

            // Past the grant's absolute expiry, all of it may go, and a store must drop it.
            let end = issuance.grant.expiresAt.addingTimeInterval(3600)
            _ = try await store.removeExpired(at: end)
            try context.require(try await store.grant(issuance.grant.id) == nil, "an expired grant was kept")
            try context.require(
                try await store.authorizationCode(redeemedCode.digest) == nil,
                "the code of an expired grant was kept"
            )
            try context.require(
                try await store.refreshToken(successor.digest) == nil,
                "an expired refresh token was kept"
            )
        },

        StoreConformanceCheck("removeExpired at a time that is not a number removes nothing") { context in
            // Every comparison with NaN is false in Swift, and in SQL NaN sorts above every number, so
            // `expires <= NaN` is true there: a store that compares without a check removes everything.
            let store = context.store
            let fixture = context.fixture
            let code = fixture.code(lifetime: 60)
            try await store.insertCode(code)
            let issuance = fixture.issuance(lifetime: 7200)
            try await context.create(issuance)
            let removed = try await store.removeExpired(at: Date(timeIntervalSinceReferenceDate: .nan))
            try context.require(removed == 0, "removeExpired at NaN removed \(removed) records")
            try context.require(
                try await store.authorizationCode(code.digest) != nil,
                "removeExpired at NaN removed an unexpired code"
            )
            try context.require(
                try await store.grant(issuance.grant.id) != nil,
                "removeExpired at NaN removed a live grant"
            )
        },
    ]
}
