// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    /// `GrantStore`'s "Remembered records": what a store answers from memory right after its own write is
    /// the record as that write left it — as a read returns it, since nothing else wrote in between. A
    /// store that remembers nothing passes them all.
    static let rememberedRecordChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("a remembered code is the code as inserted, and no other digest is remembered") {
            context in
            let store = context.store
            let code = context.fixture.code()
            try await store.insertCode(code)
            if let remembered = store.rememberedAuthorizationCode(code.digest) {
                try context.require(remembered == code, "remembered \(remembered), inserted \(code)")
            }
            let unknown = store.rememberedAuthorizationCode(context.fixture.digest())
            try context.require(unknown == nil, "an unknown digest was remembered as \(String(describing: unknown))")
        },

        StoreConformanceCheck(
            "a remembered code, refresh token and grant are as the redemption, creation or rotation left them"
        ) {
            context in
            let store = context.store
            let fixture = context.fixture
            let code = fixture.code()
            try await store.insertCode(code)
            let issuance = fixture.issuance()
            let outcome = try await store.redeemCode(code.digest, issuing: issuance, at: fixture.t0)
            try context.require(outcome == .redeemed, "redeemCode returned \(outcome)")
            try await requireCodeRememberedAsStored(code.digest, context)
            let token = try context.unwrap(issuance.refreshToken, "fixture without a refresh token")
            try await requireRememberedAsStored(token.digest, context)

            let (rotation, successor, _) = try await context.rotate(
                token.digest,
                replacing: token.digest,
                of: issuance.grant.id,
                at: fixture.t0.addingTimeInterval(1)
            )
            try context.require(rotation == .rotated, "the rotation returned \(rotation)")
            try await requireRememberedAsStored(token.digest, context)
            try await requireRememberedAsStored(successor.digest, context)

            let created = fixture.issuance()
            try await context.create(created)
            let createdToken = try context.unwrap(created.refreshToken, "fixture without a refresh token")
            try await requireRememberedAsStored(createdToken.digest, context)
            let session = fixture.session(of: created.grant.id, at: fixture.t0.addingTimeInterval(2))
            let (next, nextAccess) = fixture.rotation(of: created.grant.id, at: fixture.t0.addingTimeInterval(2))
            let started = try await store.rotateRefreshToken(
                createdToken.digest,
                replacing: createdToken.digest,
                successor: next,
                accessToken: nextAccess,
                startingSession: session,
                at: fixture.t0.addingTimeInterval(2)
            )
            if let started {
                try context.require(started == .rotated, "the rotation starting a session returned \(started)")
                try await requireRememberedAsStored(createdToken.digest, context)
                try await requireRememberedAsStored(next.digest, context)
            }
        },
    ]

    /// If the store remembers the code `digest`, requires it to be what a read returns: nothing else
    /// wrote since its own redemption, which a code remembered unused would contradict.
    private static func requireCodeRememberedAsStored(
        _ digest: SecretDigest,
        _ context: StoreConformanceContext
    ) async throws {
        let store = context.store
        try await requireAsStored(store.rememberedAuthorizationCode(digest), context) {
            try await store.authorizationCode(digest)
        }
    }

    /// If the store remembers the refresh token `digest`, requires it to be what a read returns: nothing
    /// else wrote since — a token remembered current after its own rotation would contradict it.
    private static func requireRememberedAsStored(
        _ digest: SecretDigest,
        _ context: StoreConformanceContext
    ) async throws {
        let store = context.store
        try await requireAsStored(store.rememberedRefreshToken(digest), context) {
            try await store.refreshToken(digest)
        }
    }

    /// Requires `remembered`, if any, to be what `read` returns.
    private static func requireAsStored<Record: Equatable>(
        _ remembered: Record?,
        _ context: StoreConformanceContext,
        read: () async throws -> Record?
    ) async throws {
        guard let remembered else { return }
        let stored = try await read()
        try context.require(remembered == stored, "remembered \(remembered), stored \(String(describing: stored))")
    }
}
