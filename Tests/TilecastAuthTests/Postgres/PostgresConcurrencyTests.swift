// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuth
import TilecastAuthPostgres
@_spi(Testing) import TilecastAuthTesting

/// Several engines, each on its own store with its own connection pool — as several server instances
/// behind a load balancer — racing on one database. The peers' failures are exactly here: fosite #778
/// (two concurrent redemptions of one code both succeed on PostgreSQL), Hydra #3604 (parallel refreshes
/// give random 400, 401 and 500).
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresConcurrencyTests {
    static let account: AccountID = "account-7"
    static let callback = "tilecast-ios://oauth/callback"
    static let clients = [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["tiles:read", "profile"])
    ]

    /// `count` instances on one schema: engines with their own stores and pools, one clock.
    struct Instances {
        let stores: [PostgresGrantStore]
        let engines: [AuthEngine]
        let clock: ManualTimeSource

        init(count: Int, configuration: EngineConfiguration = EngineConfiguration()) async throws {
            let schema = PostgresTestDatabase.uniqueSchema()
            var stores: [PostgresGrantStore] = []
            for _ in 0..<count {
                stores.append(
                    try await PostgresTestDatabase.makeStore(
                        clients: PostgresConcurrencyTests.clients,
                        schema: schema,
                        maximumConnections: 10
                    )
                )
            }
            let clock = ManualTimeSource()
            let accounts = InMemoryAccountDirectory(activeAccounts: [PostgresConcurrencyTests.account])
            self.engines = try stores.enumerated().map { index, store in
                try AuthEngine(
                    configuration: configuration,
                    store: store,
                    accounts: accounts,
                    rateLimiter: InMemoryRateLimiter(capacity: 100_000),
                    timeSource: clock,
                    randomSource: SeededRandomSource(seed: 0xD0_0000 + UInt64(index))
                )
            }
            self.stores = stores
            self.clock = clock
        }

        /// Sends `request` `times` times at once, round-robin over the instances; returns the statuses.
        func race(_ request: EndpointRequest, times: Int) async -> [Int] {
            await withTaskGroup(of: Int.self) { group in
                for index in 0..<times {
                    let engine = engines[index % engines.count]
                    group.addTask { await engine.handle(request: request).status }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    static func request(_ json: [String: String]) -> EndpointRequest {
        let body = try! JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        return EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json"],
            body: Array(body),
            peerAddress: "192.0.2.10"
        )
    }

    static func json(_ response: EndpointResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    /// Issues a code through the first instance, as the authorize step would; returns it and its verifier.
    static func issueCode(_ instances: Instances) async throws -> (code: String, verifier: String) {
        let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
        let issued = try await instances.engines[0].issueCode(
            account: account,
            client: .tilecastIOS,
            redirectURI: callback,
            codeChallenge: CodeChallenge.s256(for: verifier).value,
            codeChallengeMethod: "S256",
            scope: "tiles:read profile"
        )
        return (issued.code.unredactedValue, verifier)
    }

    /// The exchange of `code` with its `verifier`.
    static func exchange(code: String, verifier: String) -> EndpointRequest {
        request([
            "grant_type": "authorization_code", "client_id": "tilecast-ios", "code": code,
            "redirect_uri": callback, "code_verifier": verifier,
        ])
    }

    /// Issues a code through the first instance and exchanges it there; returns the refresh token.
    static func signIn(_ instances: Instances) async throws -> String {
        let (code, verifier) = try await issueCode(instances)
        let response = await instances.engines[0].handle(request: exchange(code: code, verifier: verifier))
        let credential = (json(response)["data"] as? [String: Any])?["credential"] as? [String: Any]
        return try #require(credential?["refresh_token"] as? String)
    }

    @Test("50 concurrent exchanges of one code through five instances: exactly one succeeds")
    func concurrentExchanges() async throws {
        let instances = try await Instances(count: 5)
        let (code, verifier) = try await Self.issueCode(instances)
        let statuses = await instances.race(Self.exchange(code: code, verifier: verifier), times: 50)
        #expect(statuses.filter { $0 == 200 }.count == 1, "statuses: \(statuses)")
        #expect(statuses.filter { $0 == 400 }.count == 49, "statuses: \(statuses)")
        // The losers presented the code with valid proof after it was used: a replay, which revokes the
        // grant (RFC 6749 §4.1.2) — one grant, revoked once.
        let grants = try await instances.stores[3].grants(of: Self.account)
        #expect(grants.count == 1)
        #expect(grants.first?.revocation?.reason == .codeReplayed)
    }

    @Test("50 concurrent redemptions of one code through five pools: one redeemed, 49 told which grant won")
    func concurrentRedemptions() async throws {
        let instances = try await Instances(count: 5)
        let store = instances.stores[0]
        let now = instances.clock.now()
        let code = try await PostgresTestDatabase.insertCode(
            into: store,
            account: Self.account,
            at: now,
            challenge: CodeChallenge.s256(for: CodeChallenge.makeVerifier(using: SystemRandomSource()))
        )
        let outcomes = await withTaskGroup(of: (GrantID, CodeRedemption?).self) { group in
            for index in 0..<50 {
                let store = instances.stores[index % 5]
                group.addTask {
                    let issuance = PostgresTestDatabase.bareIssuance(account: Self.account, at: now)
                    return (issuance.grant.id, try? await store.redeemCode(code.digest, issuing: issuance, at: now))
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let winners = outcomes.filter { $0.1 == .redeemed }
        #expect(winners.count == 1)
        let winner = try #require(winners.first?.0)
        #expect(outcomes.filter { $0.1 == .alreadyRedeemed(grant: winner) }.count == 49)
        #expect(try await instances.stores[4].grants(of: Self.account).map(\.id) == [winner])
    }

    @Test("50 concurrent refreshes of one token through five instances: exactly one rotation")
    func concurrentRefreshes() async throws {
        let instances = try await Instances(count: 5)
        let refreshToken = try await Self.signIn(instances)
        let statuses = await instances.race(
            Self.request(["grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": refreshToken]),
            times: 50
        )
        // Strict rotation: one request rotates; every other one presented a used token — a reuse, which
        // revokes the grant — or lost the race while the winner was rotating it.
        #expect(statuses.filter { $0 == 200 }.count == 1, "statuses: \(statuses)")
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 400 }, "statuses: \(statuses)")
        let grant = try #require(try await instances.stores[2].grants(of: Self.account).first)
        let lineage = try await instances.stores[1].refreshToken(
            try #require(OpaqueToken(presented: refreshToken, as: .refreshToken)).digest
        )
        #expect(lineage.map { if case .rotated = $0.token.state { true } else { false } } == true)
        #expect(grant.revocation?.reason == .refreshTokenReused)
    }

    @Test("50 concurrent rotations naming one current token through five pools: exactly one rotates")
    func concurrentRotations() async throws {
        let instances = try await Instances(count: 5)
        let refreshToken = try await Self.signIn(instances)
        let presented = try #require(OpaqueToken(presented: refreshToken, as: .refreshToken)).digest
        let lookup = try #require(try await instances.stores[0].refreshToken(presented))
        let now = instances.clock.now()
        let outcomes = await withTaskGroup(of: RefreshRotation?.self) { group in
            for index in 0..<50 {
                let store = instances.stores[index % 5]
                group.addTask {
                    let random = SystemRandomSource()
                    return try? await store.rotateRefreshToken(
                        presented,
                        replacing: presented,
                        successor: RefreshToken(
                            digest: OpaqueToken.mint(.refreshToken, using: random).digest,
                            grant: lookup.grant.id,
                            issuedAt: now,
                            expiresAt: now.addingTimeInterval(3600)
                        ),
                        accessToken: AccessToken(
                            digest: OpaqueToken.mint(.accessToken, using: random).digest,
                            grant: lookup.grant.id,
                            issuedAt: now,
                            expiresAt: now.addingTimeInterval(900)
                        ),
                        at: now
                    )
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .rotated }.count == 1)
        #expect(
            outcomes.filter { if case .superseded = $0 { true } else { false } }.count == 49,
            "every loser is told it was superseded, none fails"
        )
    }

    /// Plain rotations, leeway retries and `removeExpired` take the grant's row and the tokens' rows; a
    /// lock order that differs between two of them deadlocks, PostgreSQL ends one after a second, and the
    /// store runs it again (``PostgresStatistics/transientRetries``) or answers 503. Here the successor
    /// expires just before the race, so the removal takes it while both kinds of rotation run. (Locking
    /// the presented token before the grant's row did, in runs of this test.)
    @Test("Rotations, leeway retries and a removal racing on one grant through five pools: one wins, none fails")
    func rotationsRetriesAndRemovalRace() async throws {
        let instances = try await Instances(count: 5)
        let now = instances.clock.now()
        let later = now.addingTimeInterval(61)
        func successor(of grant: GrantID, at time: Date, lifetime: TimeInterval) -> (RefreshToken, AccessToken) {
            (
                PostgresTestDatabase.refreshToken(of: grant, at: time, lifetime: lifetime),
                PostgresTestDatabase.accessToken(of: grant, at: time)
            )
        }
        for round in 0..<40 {
            let refreshToken = try await Self.signIn(instances)
            let presented = try #require(OpaqueToken(presented: refreshToken, as: .refreshToken)).digest
            let grant = try #require(try await instances.stores[0].refreshToken(presented)).grant.id
            let (current, access) = successor(of: grant, at: now, lifetime: 60)
            let first = try await instances.stores[0].rotateRefreshToken(
                presented,
                replacing: presented,
                successor: current,
                accessToken: access,
                at: now
            )
            #expect(first == .rotated)
            let attempts = (0..<8).map { _ in successor(of: grant, at: later, lifetime: 3600) }
            let results = await withTaskGroup(of: Result<RefreshRotation?, any Error>.self) { group in
                for (index, attempt) in attempts.enumerated() {
                    let store = instances.stores[index % 5]
                    group.addTask {
                        // Even: a retry from the token before; odd: a plain rotation of the current one.
                        let from = index % 2 == 0 ? presented : current.digest
                        return await Self.result {
                            try await store.rotateRefreshToken(
                                from,
                                replacing: current.digest,
                                successor: attempt.0,
                                accessToken: attempt.1,
                                at: later
                            )
                        }
                    }
                }
                group.addTask {
                    await Self.result {
                        _ = try await instances.stores[4].removeExpired(at: later)
                        return nil
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let failures = results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
            #expect(failures.isEmpty, "round \(round): \(failures)")
            let rotated = results.filter { if case .success(.some(.rotated)) = $0 { true } else { false } }.count
            #expect(rotated <= 1, "round \(round): \(rotated) rotations won")
            let stored = try #require(try await instances.stores[0].grant(grant)).currentRefreshToken
            if rotated == 1 {
                #expect(attempts.contains { $0.0.digest == stored }, "round \(round): the grant names no winner")
            } else {
                #expect(stored == current.digest, "round \(round): nothing won, yet the grant's token moved")
            }
        }
        let retries = instances.stores.map(\.statistics.transientRetries).reduce(0, +)
        #expect(retries == 0, "\(retries) transactions deadlocked and were run again")
    }

    /// What `body` returned or threw.
    static func result<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    @Test("A revocation through one instance is seen by the next request through another")
    func revocationIsSeenEverywhere() async throws {
        let instances = try await Instances(count: 2)
        let refreshToken = try await Self.signIn(instances)
        let grant = try #require(try await instances.stores[0].grants(of: Self.account).first)
        #expect(
            try await instances.engines[0].revokeGrant(grant.id)
                == .revoked(try #require(try await instances.stores[0].grant(grant.id)))
        )
        let response = await instances.engines[1].handle(
            request: Self.request([
                "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": refreshToken,
            ])
        )
        #expect(response.status == 400)
        #expect(Self.json(response)["error"] as? String == "invalid_grant")
    }

    @Test("200 exchanges through one instance racing revokeAllGrants through another: none outlives it")
    func exchangesRacingAnAccountRevocation() async throws {
        let instances = try await Instances(count: 2)
        var outcomes: [Int: Int] = [:]
        for _ in 0..<200 {
            let (code, verifier) = try await Self.issueCode(instances)
            async let response = instances.engines[0].handle(request: Self.exchange(code: code, verifier: verifier))
            async let revocation = instances.engines[1].revokeAllGrants(of: Self.account)
            let (answer, _) = try await (response, revocation)
            outcomes[answer.status, default: 0] += 1
            #expect(answer.status == 200 || answer.status == 400)
            let live = try await instances.stores[1].grants(of: Self.account).filter { $0.revocation == nil }
            #expect(live.isEmpty, "a grant outlived the account's revocation")
        }
        #expect(outcomes.values.reduce(0, +) == 200)
    }
}
#endif
