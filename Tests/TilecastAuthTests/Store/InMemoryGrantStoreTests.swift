// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

struct InMemoryGrantStoreTests {
    @Test("Expired records are removed, and memory follows the live set")
    func expiry() async throws {
        let harness = try Harness()
        for _ in 0..<20 {
            _ = try await harness.signIn()
        }
        _ = try await harness.issueCode(verifier: harness.newVerifier())
        var snapshot = harness.memory.snapshot()
        #expect(snapshot.grants.count == 20)
        #expect(snapshot.codes.count == 21)

        // Past the unused code's expiry and the access tokens' expiry.
        harness.clock.advance(by: 901)
        _ = try await harness.memory.removeExpired(at: harness.clock.now())
        snapshot = harness.memory.snapshot()
        #expect(snapshot.codes.count == 20)  // redeemed codes stay while their grants live
        #expect(snapshot.accessTokens.isEmpty)
        #expect(snapshot.sessions.count == 20)

        // Past the grants' absolute expiry everything goes.
        harness.clock.advance(by: 366 * 86_400)
        _ = try await harness.memory.removeExpired(at: harness.clock.now())
        snapshot = harness.memory.snapshot()
        #expect(snapshot.codes.isEmpty)
        #expect(snapshot.grants.isEmpty)
        #expect(snapshot.refreshTokens.isEmpty)
        #expect(snapshot.sessions.isEmpty)
    }

    @Test("Replacing a grant's session again and again keeps one session, and the index stays within its fill")
    func sessionReplacementKeepsOneSession() async throws {
        // Every refresh with studio_session: true replaces the grant's session. The replaced session
        // goes at once; nothing of it — record, index entry or schedule — stays behind.
        let store = InMemoryGrantStore(clients: Harness.clients)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let grant = GrantID(rawValue: UUID())
        #expect(try await store.createGrant(Self.bareGrant(grant, createdAt: now, lifetime: 86_400)) == .created)
        let random = SystemRandomSource()
        var last: SecretDigest?
        for step in 0..<10_000 {
            let session = StudioSession(
                digest: OpaqueToken.mint(.studioSession, using: random).digest,
                grant: grant,
                startedAt: now.addingTimeInterval(Double(step)),
                expiresAt: now.addingTimeInterval(Double(step) + 1_209_600)
            )
            guard
                case .replaced(let previous) = try await store.replaceSession(
                    of: grant,
                    with: session,
                    at: session.startedAt
                ),
                previous == last
            else {
                Issue.record("replaceSession refused or named the wrong previous session at step \(step)")
                return
            }
            last = session.digest
        }
        let snapshot = store.snapshot()
        #expect(snapshot.sessions.count == 1)
        #expect(snapshot.sessions.keys.first == last)
        #expect(snapshot.grants[grant]?.session == last)
        let sessions = store.tableSizes[4]
        #expect(sessions.records == 1)
        #expect(sessions.buckets <= 16)
    }

    @Test("Writes remove due records as they go, without a sweep")
    func amortisedRemoval() async throws {
        let harness = try Harness()
        for _ in 0..<50 {
            _ = try await harness.issueCode(verifier: harness.newVerifier())
        }
        harness.clock.advance(by: 61)
        for _ in 0..<10 {
            _ = try await harness.issueCode(verifier: harness.newVerifier())
        }
        #expect(harness.memory.snapshot().codes.count == 10)
    }

    @Test("Removing expired records never changes an answer")
    func removalDoesNotChangeAnswers() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.clock.advance(by: 61)
        let before = await harness.exchange(code: code, verifier: verifier)
        _ = try await harness.memory.removeExpired(at: harness.clock.now())
        let after = await harness.exchange(code: code, verifier: verifier)
        #expect(before.status == 400)
        #expect(after.status == 400)
        #expect(before.errorCode == after.errorCode)
    }

    @Test("A rotation that names a stale current token writes nothing")
    func staleRotation() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let presented = try #require(OpaqueToken(presented: token, as: .refreshToken))
        let before = harness.memory.snapshot()
        let now = harness.clock.now()
        let grant = try #require(before.grants.values.first)
        let outcome = try await harness.memory.rotateRefreshToken(
            presented.digest,
            replacing: SecretDigest(of: "not current"),
            successor: RefreshToken(
                digest: SecretDigest(of: "s"),
                grant: grant.id,
                issuedAt: now,
                expiresAt: now.addingTimeInterval(60)
            ),
            accessToken: AccessToken(
                digest: SecretDigest(of: "a"),
                grant: grant.id,
                issuedAt: now,
                expiresAt: now.addingTimeInterval(60)
            ),
            at: now
        )
        guard case .superseded = outcome else {
            Issue.record("expected .superseded, got \(outcome)")
            return
        }
        #expect(harness.memory.snapshot() == before)
    }

    /// A native grant of `Harness.account` made at `now`, with fresh secrets, as an exchange would issue.
    private static func issuance(at now: Date, using random: SeededRandomSource) -> GrantIssuance {
        let plan = GrantPlan(
            client: .tilecastIOS,
            account: Harness.account,
            scope: .empty,
            now: now,
            lifetimes: LifetimeIntervals(TokenLifetimes()),
            issuesNativeCredential: true
        )
        return plan.issuance(
            MintedGrant(
                grant: GrantID(randomSource: random),
                accessToken: .mint(.accessToken, using: random),
                refreshToken: .mint(.refreshToken, using: random),
                session: .mint(.studioSession, using: random)
            )
        )
    }

    @Test("A code redeems once; the second redemption reports the grant and writes nothing")
    func redeemTwice() async throws {
        let harness = try Harness()
        let code = try await harness.insertCode(challenge: nil)
        let now = harness.clock.now()
        let first = Self.issuance(at: now, using: harness.random)
        #expect(try await harness.memory.redeemCode(code.digest, issuing: first, at: now) == .redeemed)
        let afterFirst = harness.memory.snapshot()
        let second = try await harness.memory.redeemCode(
            code.digest,
            issuing: Self.issuance(at: now, using: harness.random),
            at: now
        )
        #expect(second == .alreadyRedeemed(grant: first.grant.id))
        #expect(harness.memory.snapshot() == afterFirst)
        #expect(afterFirst.grants.count == 1)
    }

    @Test(
        "A redeemed code stays until the exact instant its grant expires, swept by a write or all at once",
        arguments: [false, true]
    )
    func redeemedCodeRetention(sweptByWrite: Bool) async throws {
        let harness = try Harness()
        let code = try await harness.insertCode(challenge: nil)
        let now = harness.clock.now()
        var issuance = Self.issuance(at: now, using: harness.random)
        // A grant that ends part way through a second: the code's due second comes before the grant does.
        let grantEnds = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + 7_200).rounded(.down) + 0.5)
        issuance.grant.expiresAt = grantEnds
        #expect(try await harness.memory.redeemCode(code.digest, issuing: issuance, at: now) == .redeemed)

        func sweep(at time: Date) async throws {
            if sweptByWrite {
                // A write sweeps what it passes on its way out; a table this small is passed whole.
                try await harness.memory.insertCode(
                    AuthorizationCode(
                        digest: OpaqueToken.mint(.authorizationCode, using: harness.random).digest,
                        client: .tilecastIOS,
                        account: Harness.account,
                        redirectURI: Harness.callback,
                        scope: .empty,
                        challenge: nil,
                        issuedAt: time,
                        expiresAt: time.addingTimeInterval(600)
                    )
                )
            } else {
                _ = try await harness.memory.removeExpired(at: time)
            }
        }
        try await sweep(at: grantEnds.addingTimeInterval(-0.25))
        #expect(try await harness.memory.authorizationCode(code.digest)?.redemption?.grant == issuance.grant.id)
        try await sweep(at: grantEnds)
        #expect(try await harness.memory.authorizationCode(code.digest) == nil)
    }

    @Test("Rotating from a token that is no longer current is superseded and writes nothing")
    func rotateTwice() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let presented = try #require(OpaqueToken(presented: token, as: .refreshToken)).digest
        let grant = try #require(harness.memory.snapshot().grants.values.first)
        let now = harness.clock.now()
        func rotation(_ name: String) -> (RefreshToken, AccessToken) {
            (
                RefreshToken(
                    digest: SecretDigest(of: "r" + name),
                    grant: grant.id,
                    issuedAt: now,
                    expiresAt: now.addingTimeInterval(60)
                ),
                AccessToken(
                    digest: SecretDigest(of: "a" + name),
                    grant: grant.id,
                    issuedAt: now,
                    expiresAt: now.addingTimeInterval(60)
                )
            )
        }
        let (successor, access) = rotation("1")
        let rotated = try await harness.memory.rotateRefreshToken(
            presented,
            replacing: presented,
            successor: successor,
            accessToken: access,
            at: now
        )
        #expect(rotated == .rotated)
        let afterFirst = harness.memory.snapshot()
        let (again, againAccess) = rotation("2")
        let outcome = try await harness.memory.rotateRefreshToken(
            presented,
            replacing: presented,
            successor: again,
            accessToken: againAccess,
            at: now
        )
        guard case .superseded(let current) = outcome else {
            Issue.record("expected .superseded, got \(outcome)")
            return
        }
        #expect(current.grant.currentRefreshToken == successor.digest)
        #expect(harness.memory.snapshot() == afterFirst)
    }

    @Test("Revocation and session replacement refuse a grant that is not live")
    func notLive() async throws {
        let harness = try Harness()
        _ = try await harness.signIn()
        let grant = try #require(harness.memory.snapshot().grants.values.first)
        let now = harness.clock.now()
        #expect(
            try await harness.memory.revokeGrant(grant.id, reason: .revokedByServer, at: grant.expiresAt) == .notFound
        )
        _ = try await harness.memory.revokeGrant(grant.id, reason: .revokedByServer, at: now)
        let session = StudioSession(
            digest: SecretDigest(of: "s"),
            grant: grant.id,
            startedAt: now,
            expiresAt: now.addingTimeInterval(60)
        )
        #expect(try await harness.memory.replaceSession(of: grant.id, with: session, at: now) == .grantNotLive)
    }
}

extension InMemoryGrantStoreTests {
    @Test("Removing expired records at a time that is not a number removes nothing")
    func removalAtNaN() async throws {
        // `Date`'s `<=` is true against NaN, so a plain comparison would call every record due.
        let store = InMemoryGrantStore(clients: Harness.clients)
        for createdAt in [Date(timeIntervalSince1970: -86_400), Date(timeIntervalSince1970: 1_800_000_000)] {
            let issuance = Self.bareGrant(GrantID(rawValue: UUID()), createdAt: createdAt, lifetime: 3_600)
            #expect(try await store.createGrant(issuance) == .created)
        }
        _ = try await store.revokeGrants(
            of: Harness.account,
            reason: .revokedByServer,
            at: Date(timeIntervalSince1970: 0)
        )
        let before = store.snapshot()
        #expect(try await store.removeExpired(at: Date(timeIntervalSince1970: .nan)) == 0)
        #expect(store.snapshot() == before)
    }

    /// A snapshot may file a grant under the key of another (it is a dictionary a caller can build): the
    /// grant stored is the later one, and its account's operations find it (found by review: it stayed in
    /// the first grant's account's list, so sign-out everywhere missed it and a sweep stopped the process).
    @Test("A snapshot that files one account's grant under another's id leaves it to its own account")
    func snapshotFilingAGrantUnderAnothersID() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let shared = GrantID(rawValue: UUID())
        var alices = Self.bareGrant(shared, createdAt: now, lifetime: 3_600)
        alices.grant.account = "alice"
        var bobs = Self.bareGrant(GrantID(rawValue: UUID()), createdAt: now, lifetime: 3_600)
        bobs.grant.account = "bob"
        bobs.grant.id = shared
        var snapshot = InMemoryGrantStore(clients: Harness.clients).snapshot()
        snapshot.grants[GrantID(rawValue: UUID())] = alices.grant
        snapshot.grants[GrantID(rawValue: UUID())] = bobs.grant
        let store = InMemoryGrantStore(clients: Harness.clients, snapshot: snapshot)
        let held = try #require(try await store.grant(shared))
        let other: AccountID = held.account == "alice" ? "bob" : "alice"
        #expect(try await store.grants(of: held.account).map(\.id) == [shared])
        #expect(try await store.grants(of: other).isEmpty)
        #expect(try await store.revokeGrants(of: held.account, reason: .signedOut, at: now).map(\.id) == [shared])
        #expect(try await store.grant(shared)?.revocation != nil)
        _ = try await store.removeExpired(at: now.addingTimeInterval(7_200))
        #expect(try await store.grant(shared) == nil)
    }

    /// Grants created at the same instant are listed in the order of their ids' text, as the PostgreSQL
    /// store's `ORDER BY created_at, id` lists them — by comparing the ids' bytes, not their formatted text.
    @Test("An account's grants of one instant are listed and revoked in the order of their ids' text")
    func grantsOfOneInstantInTheOrderOfTheirIds() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let texts = [
            "A0000000-0000-4000-8000-000000000000", "0A000000-0000-4000-8000-000000000000",
            "9F000000-0000-4000-8000-000000000000", "0A000000-0000-4000-8000-000000000001",
            "09FFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
        ]
        let ids = try texts.map { GrantID(rawValue: try #require(UUID(uuidString: $0))) }
        let store = InMemoryGrantStore(clients: Harness.clients)
        for id in ids {
            #expect(try await store.createGrant(Self.bareGrant(id, createdAt: now, lifetime: 3_600)) == .created)
        }
        let earlier = GrantID(rawValue: UUID())
        let created = try await store.createGrant(
            Self.bareGrant(earlier, createdAt: now.addingTimeInterval(-1), lifetime: 3_600)
        )
        #expect(created == .created)
        let expected = [earlier] + ids.sorted { $0.rawValue.uuidString < $1.rawValue.uuidString }
        #expect(try await store.grants(of: Harness.account).map(\.id) == expected)
        #expect(try await store.revokeGrants(of: Harness.account, reason: .signedOut, at: now).map(\.id) == expected)
    }

    // MARK: Shared strings

    @Test(
        "Records share one copy of a registered client's id and redirect URI and of a scope, however the caller made its strings"
    )
    func recordsShareStrings() async throws {
        // Strings longer than 15 bytes have storage of their own: a server decoding each request makes a
        // copy per request, which a store would otherwise keep per record. None of these fit inline.
        let clientID = ClientID("tilecast-ios-enterprise")
        let callback = "tilecast-ios-enterprise://oauth/callback"
        let client = Client(id: clientID, redirectURIs: [callback], allowedScopeTokens: ["tiles:read", "profile"])
        let store = InMemoryGrantStore(clients: [client])
        let account = AccountID("account-3f1c2a9e-5b7d-4e60-9a8b")
        let scope = "tiles:read profile"
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let random = SystemRandomSource()
        func code(account: AccountID) -> AuthorizationCode {
            AuthorizationCode(
                digest: OpaqueToken.mint(.authorizationCode, using: random).digest,
                client: ClientID(Self.decoded(clientID.rawValue)),
                account: AccountID(Self.decoded(account.rawValue)),
                redirectURI: Self.decoded(callback),
                scope: Scope(Self.decoded(scope))!,
                challenge: .s256(for: "verifier-\(UUID().uuidString)-and-more-to-make-43"),
                issuedAt: now,
                expiresAt: now.addingTimeInterval(600)
            )
        }
        let first = code(account: account)
        let second = code(account: account)
        try await store.insertCode(first)
        try await store.insertCode(second)
        let stored = try #require(try await store.authorizationCode(first.digest))
        let storedSecond = try #require(try await store.authorizationCode(second.digest))
        // The caller's copies differ from the registration's...
        #expect(try Self.storage(of: first.redirectURI) != Self.storage(of: callback))
        #expect(try Self.storage(of: first.scope.rawValue) != Self.storage(of: second.scope.rawValue))
        // ...and the stored codes hold the registration's, and one copy of the scope.
        #expect(try Self.storage(of: stored.redirectURI) == Self.storage(of: callback))
        #expect(try Self.storage(of: storedSecond.redirectURI) == Self.storage(of: callback))
        #expect(try Self.storage(of: stored.client.rawValue) == Self.storage(of: clientID.rawValue))
        #expect(try Self.storage(of: stored.scope.rawValue) == Self.storage(of: storedSecond.scope.rawValue))
        #expect(stored == first && storedSecond == second)

        // A created grant shares the registration's client id and the scope's one copy.
        let created = Grant(
            id: GrantID(rawValue: UUID()),
            client: ClientID(Self.decoded(clientID.rawValue)),
            account: AccountID(Self.decoded(account.rawValue)),
            scope: Scope(Self.decoded(scope))!,
            createdAt: now,
            expiresAt: now.addingTimeInterval(86_400),
            currentRefreshToken: nil,
            session: nil
        )
        let creation = GrantIssuance(grant: created, accessToken: nil, refreshToken: nil, session: nil)
        #expect(try await store.createGrant(creation) == .created)
        let storedCreated = try #require(try await store.grant(created.id))
        #expect(storedCreated == created)
        #expect(try Self.storage(of: storedCreated.client.rawValue) == Self.storage(of: clientID.rawValue))
        #expect(try Self.storage(of: storedCreated.scope.rawValue) == Self.storage(of: stored.scope.rawValue))

        // A store restored from a snapshot of fresh copies shares them again.
        var snapshot = store.snapshot()
        snapshot.codes = snapshot.codes.mapValues { code in
            var copy = code
            copy.client = ClientID(Self.decoded(code.client.rawValue))
            copy.redirectURI = Self.decoded(code.redirectURI)
            copy.scope = Scope(Self.decoded(code.scope.rawValue))!
            return copy
        }
        snapshot.grants = snapshot.grants.mapValues { grant in
            var copy = grant
            copy.client = ClientID(Self.decoded(grant.client.rawValue))
            copy.scope = Scope(Self.decoded(grant.scope.rawValue))!
            return copy
        }
        let restored = InMemoryGrantStore(clients: [client], snapshot: snapshot)
        #expect(restored.snapshot() == store.snapshot())
        let restoredCode = try #require(try await restored.authorizationCode(second.digest))
        let restoredGrant = try #require(try await restored.grant(created.id))
        #expect(try Self.storage(of: restoredCode.redirectURI) == Self.storage(of: callback))
        #expect(try Self.storage(of: restoredCode.client.rawValue) == Self.storage(of: clientID.rawValue))
        #expect(try Self.storage(of: restoredGrant.client.rawValue) == Self.storage(of: clientID.rawValue))
        #expect(
            try Self.storage(of: restoredGrant.scope.rawValue) == Self.storage(of: restoredCode.scope.rawValue)
        )
    }

    @Test("An exchange's grant holds its code's strings, not copies of them")
    func exchangeGrantHoldsCodeStrings() async throws {
        // The store does not compare a redemption's strings with its code's (the exchange's hot path); the
        // engine makes the grant of the code's own, and this holds it to that.
        let harness = try Harness()
        let account = AccountID("account-3f1c2a9e-5b7d-4e60-9a8b")
        harness.accounts.setStatus(.active, of: account)
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(
            verifier: verifier,
            redirectURI: Self.decoded(Harness.callback),
            scope: Self.decoded(Harness.scope),
            account: AccountID(Self.decoded(account.rawValue))
        )
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
        let snapshot = harness.memory.snapshot()
        let grant = try #require(snapshot.grants.values.first)
        let redeemed = try #require(snapshot.codes.values.first)
        #expect(redeemed.redemption?.grant == grant.id)
        #expect(try Self.storage(of: grant.account.rawValue) == Self.storage(of: redeemed.account.rawValue))
        #expect(try Self.storage(of: grant.scope.rawValue) == Self.storage(of: redeemed.scope.rawValue))
        #expect(try Self.storage(of: redeemed.redirectURI) == Self.storage(of: Harness.callback))
    }

    @Test("A store shares a string only with one of the same bytes, never with one Unicode merely finds equal")
    func sharingComparesBytes() async throws {
        // "é" as one scalar (U+00E9) and as "e" with a combining acute (U+0301): `==` finds the strings
        // equal (canonical equivalence), but the exchange compares the redirect URI byte for byte.
        let composed = "tilecast-ios-enterprise://oauth/caf\u{E9}"
        let decomposed = "tilecast-ios-enterprise://oauth/cafe\u{301}"
        #expect(composed == decomposed)
        let clientID = ClientID("tilecast-ios-enterprise")
        let client = Client(id: clientID, redirectURIs: [composed], allowedScopeTokens: ["profile"])
        let store = InMemoryGrantStore(clients: [client])
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let code = AuthorizationCode(
            digest: OpaqueToken.mint(.authorizationCode, using: SystemRandomSource()).digest,
            client: clientID,
            account: Harness.account,
            redirectURI: decomposed,
            scope: Scope("profile")!,
            challenge: .s256(for: "a-verifier-long-enough-to-be-forty-three-characters"),
            issuedAt: now,
            expiresAt: now.addingTimeInterval(600)
        )
        try await store.insertCode(code)
        let stored = try #require(try await store.authorizationCode(code.digest))
        #expect(Array(stored.redirectURI.utf8) == Array(decomposed.utf8))
    }

    @Test("The scope pool keeps at most its capacity, its own compact copies, and no scope past its length")
    func scopePoolIsBounded() throws {
        var storage = InMemoryGrantStorage(clients: [Self.enterpriseClient])
        var stored: [(SecretDigest, String)] = []
        for number in 0..<(SharedStrings.scopeCapacity * 2) {
            let scope = "tiles:read layer-\(number) profile"
            let code = Self.code(scope: scope)
            try storage.insertCode(code)
            stored.append((code.digest, scope))
        }
        #expect(storage.sharedStrings.pooledScopes.count == SharedStrings.scopeCapacity)
        #expect(storage.sharedStrings.isIndexConsistent)
        for (digest, scope) in stored {
            #expect(storage.codes[digest]?.scope.rawValue == scope)
        }

        // A scope past the length is stored as given, and not pooled.
        let long = (["tiles:read"] + Array(repeating: "profile", count: 40)).joined(separator: " ")
        #expect(long.utf8.count > SharedStrings.longestPooledScope)
        let longCode = Self.code(scope: long)
        try storage.insertCode(longCode)
        #expect(storage.codes[longCode.digest]?.scope.rawValue == long)
        #expect(!storage.sharedStrings.pooledScopes.contains { $0.rawValue == long })

        // The pool keeps its own copy, not a caller's string whose storage is larger than its bytes.
        var roomy = ""
        roomy.reserveCapacity(1 << 20)
        roomy += "tiles:read roomy profile"
        let roomyCode = AuthorizationCode(
            digest: OpaqueToken.mint(.authorizationCode, using: SystemRandomSource()).digest,
            client: Self.enterpriseClient.id,
            account: Harness.account,
            redirectURI: Harness.callback,
            scope: Scope(roomy)!,
            challenge: .s256(for: "a-verifier-long-enough-to-be-forty-three-characters"),
            issuedAt: Self.now,
            expiresAt: Self.now.addingTimeInterval(600)
        )
        try storage.insertCode(roomyCode)
        let pooled = try #require(storage.sharedStrings.pooledScopes.first { $0.rawValue == roomy })
        #expect(try Self.storage(of: pooled.rawValue) != Self.storage(of: roomy))
        let roomyStored = try #require(storage.codes[roomyCode.digest])
        #expect(try Self.storage(of: roomyStored.scope.rawValue) == Self.storage(of: pooled.rawValue))
    }

    @Test("A scope in use stays pooled while scopes used once take turns in the rest of the pool")
    func scopesInUseStayPooled() throws {
        var storage = InMemoryGrantStorage(clients: [Self.enterpriseClient])
        // The pool is full of scopes used once before the one in use first comes.
        for number in 0..<SharedStrings.scopeCapacity {
            try storage.insertCode(Self.code(scope: "tiles:read before-\(number) profile"))
        }
        var inUse: [SecretDigest] = []
        for number in 0..<(SharedStrings.scopeCapacity * 8) {
            // Every eighth code has the scope a client asks for every time; the rest are one-offs, as one
            // account issuing codes of ever new scopes would make them.
            let scope = number % 8 == 0 ? "tiles:read profile" : "tiles:read once-\(number) profile"
            let code = Self.code(scope: Self.decoded(scope))
            try storage.insertCode(code)
            if number % 8 == 0 {
                inUse.append(code.digest)
            }
        }
        let first = try Self.storage(of: #require(storage.codes[inUse[0]]).scope.rawValue)
        for digest in inUse {
            #expect(try Self.storage(of: #require(storage.codes[digest]).scope.rawValue) == first)
        }
        #expect(storage.sharedStrings.pooledScopes.count == SharedStrings.scopeCapacity)
        #expect(storage.sharedStrings.isIndexConsistent)
    }

    @Test("A full pool whose every scope was stored with again still takes a new scope")
    func fullPoolOfScopesInUseTakesANewOne() throws {
        var storage = InMemoryGrantStorage(clients: [Self.enterpriseClient])
        let scopes = (0..<SharedStrings.scopeCapacity).map { "tiles:read used-\($0) profile" }
        for scope in scopes + scopes {
            try storage.insertCode(Self.code(scope: scope))
        }
        #expect(Set(storage.sharedStrings.pooledScopes.map(\.rawValue)) == Set(scopes))
        // Every slot was stored with again, so the hand must clear each on its way round before it finds
        // one to replace. A hand that never cleared one would go round for ever, inside the store's lock:
        // this test would hang the run, which CI's time bound ends as a failure (tried: it does).
        try storage.insertCode(Self.code(scope: "tiles:read newcomer profile"))
        let pooled = storage.sharedStrings.pooledScopes.map(\.rawValue)
        #expect(pooled.count == SharedStrings.scopeCapacity)
        #expect(pooled.contains("tiles:read newcomer profile"))
        #expect(Set(pooled).subtracting(scopes).count == 1)
        #expect(storage.sharedStrings.isIndexConsistent)
    }

    @Test("A refused write leaves the scope pool as it was")
    func refusedWritesLeaveThePool() throws {
        var storage = InMemoryGrantStorage(clients: [Self.enterpriseClient])
        let code = Self.code(scope: "tiles:read first profile")
        try storage.insertCode(code)
        let pooled = storage.sharedStrings.pooledScopes.map(\.rawValue)
        #expect(pooled == ["tiles:read first profile"])

        // A code whose digest is stored already.
        var again = Self.code(scope: "tiles:read second profile")
        again.digest = code.digest
        #expect(throws: InMemoryGrantStoreError.codeAlreadyStored) { try storage.insertCode(again) }
        #expect(storage.sharedStrings.pooledScopes.map(\.rawValue) == pooled)

        // A grant whose id is stored already, and one for an account whose grants were all revoked since.
        var issuance = Self.bareGrant(GrantID(rawValue: UUID()), createdAt: Self.now, lifetime: 3_600)
        issuance.grant.client = Self.enterpriseClient.id
        issuance.grant.scope = Scope("tiles:read third profile")!
        #expect(try storage.createGrant(issuance) == .created)
        let afterGrant = storage.sharedStrings.pooledScopes.map(\.rawValue)
        issuance.grant.scope = Scope("tiles:read fourth profile")!
        #expect(throws: InMemoryGrantStoreError.grantAlreadyStored) { try storage.createGrant(issuance) }
        _ = storage.revokeGrants(of: Harness.account, reason: .signedOut, at: Self.now.addingTimeInterval(1))
        issuance.grant.id = GrantID(rawValue: UUID())
        #expect(try storage.createGrant(issuance) == .accountRevoked)
        #expect(storage.sharedStrings.pooledScopes.map(\.rawValue) == afterGrant)
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let enterpriseClient = Client(
        id: ClientID("tilecast-ios-enterprise"),
        redirectURIs: [Harness.callback],
        allowedScopeTokens: []
    )

    /// A code of `enterpriseClient` for `Harness.account` with `scope`, unredeemed.
    static func code(scope: String) -> AuthorizationCode {
        AuthorizationCode(
            digest: OpaqueToken.mint(.authorizationCode, using: SystemRandomSource()).digest,
            client: enterpriseClient.id,
            account: Harness.account,
            redirectURI: Harness.callback,
            scope: Scope(scope)!,
            challenge: .s256(for: "a-verifier-long-enough-to-be-forty-three-characters"),
            issuedAt: now,
            expiresAt: now.addingTimeInterval(600)
        )
    }

    /// A copy of `text` with storage of its own, as a parser decoding a request's bytes makes it.
    static func decoded(_ text: String) -> String {
        String(decoding: Array(text.utf8), as: UTF8.self)
    }

    /// Where a string longer than 15 bytes keeps its bytes: two strings share storage when equal.
    static func storage(of text: String) throws -> UnsafeRawPointer {
        try #require(text.utf8.count > 15, "a string of 15 bytes or less is kept inline, not in storage")
        let address = text.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) }
        return try #require(address ?? nil)
    }

    /// A grant of `Harness.account` with no token and no session.
    static func bareGrant(_ id: GrantID, createdAt: Date, lifetime: TimeInterval) -> GrantIssuance {
        GrantIssuance(
            grant: Grant(
                id: id,
                client: .tilecastIOS,
                account: Harness.account,
                scope: Scope("profile")!,
                createdAt: createdAt,
                expiresAt: createdAt.addingTimeInterval(lifetime),
                currentRefreshToken: nil,
                session: nil
            ),
            accessToken: nil,
            refreshToken: nil,
            session: nil
        )
    }
}
