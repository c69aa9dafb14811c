// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension StoreConformanceCheck {
    static let codeChecks: [StoreConformanceCheck] = [
        StoreConformanceCheck("client returns each registered client, and nil for any other") { context in
            let ios = try await context.store.client(.tilecastIOS)
            try context.require(
                ios == StoreFixture.clients[0],
                "client(tilecast-ios) returned \(String(describing: ios))"
            )
            let missing = try await context.store.client("tilecast-tv")
            try context.require(missing == nil, "client(tilecast-tv) returned \(String(describing: missing))")
        },

        StoreConformanceCheck("a stored code reads back unchanged, unredeemed") { context in
            let code = context.fixture.code()
            try await context.store.insertCode(code)
            let read = try await context.store.authorizationCode(code.digest)
            try context.require(read == code, "read back \(String(describing: read)), stored \(code)")
            let other = try await context.store.authorizationCode(context.fixture.digest())
            try context.require(other == nil, "an unknown digest returned a code")
        },

        StoreConformanceCheck("redeemCode redeems an unused code and stores the whole issuance") { context in
            let store = context.store
            let fixture = context.fixture
            let code = fixture.code()
            try await store.insertCode(code)
            let issuance = fixture.issuance()
            let outcome = try await store.redeemCode(code.digest, issuing: issuance, at: fixture.t0)
            try context.require(outcome == .redeemed, "redeemCode returned \(outcome)")
            let redeemed = try context.unwrap(try await store.authorizationCode(code.digest), "the code vanished")
            try context.require(
                redeemed.redemption == AuthorizationCode.Redemption(grant: issuance.grant.id, redeemedAt: fixture.t0),
                "the code's redemption is \(String(describing: redeemed.redemption))"
            )
            try await requireIssuanceStored(issuance, context)
        },

        StoreConformanceCheck("redeemCode reports an already redeemed code with its grant and writes nothing") {
            context in
            let store = context.store
            let fixture = context.fixture
            let code = fixture.code()
            try await store.insertCode(code)
            let first = fixture.issuance()
            _ = try await store.redeemCode(code.digest, issuing: first, at: fixture.t0)
            let second = fixture.issuance()
            let outcome = try await store.redeemCode(code.digest, issuing: second, at: fixture.t0.addingTimeInterval(1))
            try context.require(
                outcome == .alreadyRedeemed(grant: first.grant.id),
                "the second redemption returned \(outcome)"
            )
            try await requireNothingStored(second, context)
            let redeemed = try await store.authorizationCode(code.digest)
            try context.require(redeemed?.redemption?.grant == first.grant.id, "the code now names another grant")
        },

        StoreConformanceCheck("redeemCode refuses unknown and expired codes and writes nothing") { context in
            let store = context.store
            let fixture = context.fixture
            let unknown = fixture.issuance()
            let outcome = try await store.redeemCode(fixture.digest(), issuing: unknown, at: fixture.t0)
            try context.require(outcome == .notFound, "an unknown code returned \(outcome)")
            try await requireNothingStored(unknown, context)

            let code = fixture.code(lifetime: 60)
            try await store.insertCode(code)
            let late = fixture.issuance()
            let expired = try await store.redeemCode(code.digest, issuing: late, at: code.expiresAt)
            try context.require(expired == .notFound, "a code redeemed at its expiry returned \(expired)")
            try await requireNothingStored(late, context)
            let read = try await store.authorizationCode(code.digest)
            try context.require(read == nil || read?.redemption == nil, "the expired code was marked redeemed")
        },

        StoreConformanceCheck("a redeemed code is still reported after its own expiry, while its grant lives") {
            context in
            let store = context.store
            let fixture = context.fixture
            let code = fixture.code(lifetime: 60)
            try await store.insertCode(code)
            let issuance = fixture.issuance(lifetime: 86_400)
            _ = try await store.redeemCode(code.digest, issuing: issuance, at: fixture.t0)
            let later = fixture.t0.addingTimeInterval(3600)
            _ = try await store.removeExpired(at: later)
            let replay = try await store.redeemCode(code.digest, issuing: fixture.issuance(at: later), at: later)
            try context.require(
                replay == .alreadyRedeemed(grant: issuance.grant.id),
                "a replay an hour later returned \(replay): replays must stay detectable while the grant lives"
            )
        },

        StoreConformanceCheck("concurrent redemptions of one code: exactly one succeeds") { context in
            let store = context.store
            let fixture = context.fixture
            let code = fixture.code()
            try await store.insertCode(code)
            let issuances = (0..<context.concurrency).map { _ in fixture.issuance() }
            let outcomes = try await context.concurrently { index in
                try await store.redeemCode(code.digest, issuing: issuances[index], at: fixture.t0)
            }
            let winners = outcomes.filter { $0 == .redeemed }.count
            try context.require(winners == 1, "\(winners) of \(context.concurrency) concurrent redemptions succeeded")
            let redeemed = try context.unwrap(try await store.authorizationCode(code.digest), "the code vanished")
            let winner = try context.unwrap(redeemed.redemption?.grant, "the code is not redeemed")
            for outcome in outcomes where outcome != .redeemed {
                try context.require(outcome == .alreadyRedeemed(grant: winner), "a loser saw \(outcome)")
            }
            var stored = 0
            for issuance in issuances where try await store.grant(issuance.grant.id) != nil {
                stored += 1
            }
            try context.require(stored == 1, "\(stored) grants were stored for one code")
        },

        StoreConformanceCheck("createGrant stores the grant, its tokens and its session") { context in
            let issuance = context.fixture.issuance(client: "tilecast-web")
            try await context.create(issuance)
            try await requireIssuanceStored(issuance, context)
        },
    ]

    /// Fails unless every record of `issuance` reads back with its grant.
    static func requireIssuanceStored(_ issuance: GrantIssuance, _ context: StoreConformanceContext) async throws {
        let store = context.store
        let grant = try await store.grant(issuance.grant.id)
        try context.require(grant == issuance.grant, "the grant reads back as \(String(describing: grant))")
        if let token = issuance.accessToken {
            let lookup = try await store.accessToken(token.digest)
            try context.require(
                lookup == AccessTokenLookup(token: token, grant: issuance.grant),
                "the access token reads back as \(String(describing: lookup))"
            )
        }
        if let token = issuance.refreshToken {
            let lookup = try await store.refreshToken(token.digest)
            try context.require(
                lookup == RefreshTokenLookup(token: token, grant: issuance.grant),
                "the refresh token reads back as \(String(describing: lookup))"
            )
        }
        if let session = issuance.session {
            let lookup = try await store.session(session.digest)
            try context.require(
                lookup == SessionLookup(session: session, grant: issuance.grant),
                "the session reads back as \(String(describing: lookup))"
            )
        }
    }

    /// Fails if any record of `issuance` was stored.
    static func requireNothingStored(_ issuance: GrantIssuance, _ context: StoreConformanceContext) async throws {
        let store = context.store
        try context.require(try await store.grant(issuance.grant.id) == nil, "a refused operation stored the grant")
        if let token = issuance.accessToken {
            try context.require(
                try await store.accessToken(token.digest) == nil,
                "a refused operation stored an access token"
            )
        }
        if let token = issuance.refreshToken {
            try context.require(
                try await store.refreshToken(token.digest) == nil,
                "a refused operation stored a refresh token"
            )
        }
        if let session = issuance.session {
            try context.require(try await store.session(session.digest) == nil, "a refused operation stored a session")
        }
    }
}
