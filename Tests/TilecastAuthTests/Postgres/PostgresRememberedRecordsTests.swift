// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Foundation
import Testing
import TilecastAuth
@_spi(Testing) @testable import TilecastAuthPostgres
@_spi(Testing) import TilecastAuthTesting

/// A store remembers the codes and refresh tokens it wrote itself (``PostgresConfiguration/rememberedRecords``),
/// and the engine goes forward on them without reading them back — one round trip fewer. Another instance may
/// have redeemed, rotated or revoked since, so a remembered record is stale by design; these tests hold the
/// answers to the ones a fresh read gives: the instance that wrote the record answers as any other would.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable, PostgresTestDatabase.skipMessage), .postgresServer)
struct PostgresRememberedRecordsTests {
    typealias Shared = PostgresConcurrencyTests

    /// Two instances on one schema — `writer` issues codes and signs in, `other` acts on what it wrote —
    /// with one clock and one account directory, and in-memory rate limiters, so that every round trip
    /// counted is the store's.
    struct Pair {
        let writer: AuthEngine
        let other: AuthEngine
        let writerStore: PostgresGrantStore
        let otherStore: PostgresGrantStore
        let clock = ManualTimeSource()
        let accounts = InMemoryAccountDirectory(activeAccounts: [Shared.account])
        let writerObserver = RecordingObserver()
        let otherObserver = RecordingObserver()

        /// With `writerConnectionWait`, the writer's store has one connection, which its callers wait for
        /// that long.
        init(
            leeway: Duration = .zero,
            rememberedRecords: Int = 10_000,
            writerConnectionWait: Duration? = nil
        ) async throws {
            let schema = PostgresTestDatabase.uniqueSchema()
            func store(remembering capacity: Int, connectionWait: Duration? = nil) async throws -> PostgresGrantStore {
                let store = PostgresGrantStore(
                    clients: Shared.clients,
                    configuration: try PostgresConfiguration(
                        databaseURL: PostgresTestDatabase.url ?? "",
                        schema: schema,
                        maximumConnections: connectionWait == nil ? 10 : 1,
                        connectionWaitTimeout: connectionWait ?? .seconds(5),
                        statementTimeout: PostgresLatch.holdingStatementTimeout,
                        rememberedRecords: capacity
                    )
                )
                try await store.migrate()
                return store
            }
            writerStore = try await store(remembering: rememberedRecords, connectionWait: writerConnectionWait)
            otherStore = try await store(remembering: rememberedRecords)
            let configuration = EngineConfiguration(refreshTokenReuseLeeway: leeway)
            let (accounts, clock) = (accounts, clock)
            func engine(_ store: PostgresGrantStore, seed: UInt64, observer: RecordingObserver) throws -> AuthEngine {
                try AuthEngine(
                    configuration: configuration,
                    store: store,
                    accounts: accounts,
                    rateLimiter: InMemoryRateLimiter(capacity: 100_000),
                    observer: observer,
                    timeSource: clock,
                    randomSource: SeededRandomSource(seed: seed)
                )
            }
            writer = try engine(writerStore, seed: 0xE0_0001, observer: writerObserver)
            other = try engine(otherStore, seed: 0xE0_0002, observer: otherObserver)
        }

        /// Issues a code through the writer, or through `engine`.
        func issueCode(at engine: AuthEngine? = nil) async throws -> (code: String, verifier: String) {
            let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
            let issued = try await (engine ?? writer).issueCode(
                account: Shared.account,
                client: .tilecastIOS,
                redirectURI: Shared.callback,
                codeChallenge: CodeChallenge.s256(for: verifier).value,
                codeChallengeMethod: "S256",
                scope: "tiles:read profile"
            )
            return (issued.code.unredactedValue, verifier)
        }

        /// Signs in through the writer; returns the refresh token and its grant.
        func signIn() async throws -> (refreshToken: String, grant: GrantID) {
            let (code, verifier) = try await issueCode()
            let response = await writer.handle(request: Shared.exchange(code: code, verifier: verifier))
            #expect(response.status == 200)
            let credential = (Shared.json(response)["data"] as? [String: Any])?["credential"] as? [String: Any]
            let token = try #require(credential?["refresh_token"] as? String)
            let grant = try #require(try await writerStore.grants(of: Shared.account).last)
            return (token, grant.id)
        }

        /// Has each store prepare every statement of an exchange and a refresh on its connection, each
        /// through the lookups, so that the round trips counted next are the operations' own.
        func warmUp() async throws {
            for (issuer, exchanger, refresher) in [(other, writer, other), (writer, other, writer)] {
                let (code, verifier) = try await issueCode(at: issuer)
                let response = await exchanger.handle(request: Shared.exchange(code: code, verifier: verifier))
                let credential = (Shared.json(response)["data"] as? [String: Any])?["credential"] as? [String: Any]
                let token = try #require(credential?["refresh_token"] as? String)
                #expect(await refresher.handle(request: PostgresRememberedRecordsTests.refresh(token)).status == 200)
            }
        }

        /// The grant as the database holds it.
        func grant(_ id: GrantID) async throws -> Grant {
            try #require(try await otherStore.grant(id))
        }

        /// The round trips `body` makes through `store`.
        func roundTrips(
            of store: PostgresGrantStore,
            _ body: () async throws -> EndpointResponse
        ) async throws -> (Int, EndpointResponse) {
            let before = store.statistics.roundTrips
            let response = try await body()
            return (store.statistics.roundTrips - before, response)
        }
    }

    static func refresh(_ token: String) -> EndpointRequest {
        Shared.request(["grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": token])
    }

    // MARK: A record another instance changed

    @Test(
        "A code redeemed through another instance and replayed to the one that issued it revokes its grant",
        arguments: [(false, false), (true, false), (false, true), (true, true)]
    )
    func codeReplayedToItsWriter(accountDisabled: Bool, codeExpired: Bool) async throws {
        let pair = try await Pair()
        let (code, verifier) = try await pair.issueCode()
        #expect(await pair.other.handle(request: Shared.exchange(code: code, verifier: verifier)).status == 200)
        let grant = try #require(try await pair.otherStore.grants(of: Shared.account).first)
        // A fresh read finds the code used, and a used code with valid proof is a replay whatever the
        // account's state or the code's age (RFC 6749 §4.1.2): the writer must not refuse it as inactive
        // or expired from what it remembers, which would leave the grant standing.
        if accountDisabled { pair.accounts.setStatus(.inactive, of: Shared.account) }
        if codeExpired { pair.clock.advance(by: 3_600) }
        let replay = await pair.writer.handle(request: Shared.exchange(code: code, verifier: verifier))
        #expect(replay.status == 400)
        #expect(Shared.json(replay)["error"] as? String == "invalid_grant")
        #expect(try await pair.grant(grant.id).revocation?.reason == .codeReplayed)
    }

    @Test(
        "A refresh token rotated through another instance and reused at the one that wrote it revokes its grant",
        arguments: [false, true]
    )
    func tokenReusedAtItsWriter(accountDisabled: Bool) async throws {
        let pair = try await Pair()
        let (token, grant) = try await pair.signIn()
        #expect(await pair.other.handle(request: Self.refresh(token)).status == 200)
        if accountDisabled { pair.accounts.setStatus(.inactive, of: Shared.account) }
        let reuse = await pair.writer.handle(request: Self.refresh(token))
        #expect(reuse.status == 400)
        #expect(Shared.json(reuse)["error"] as? String == "invalid_grant")
        #expect(try await pair.grant(grant).revocation?.reason == .refreshTokenReused)
    }

    @Test("Within the leeway, a token rotated through another instance is retried at its writer, as anywhere")
    func retryAtItsWriterWithinTheLeeway() async throws {
        let pair = try await Pair(leeway: .seconds(30))
        let (token, grant) = try await pair.signIn()
        #expect(await pair.other.handle(request: Self.refresh(token)).status == 200)
        pair.clock.advance(by: 5)
        let retry = await pair.writer.handle(request: Self.refresh(token))
        #expect(retry.status == 200)
        #expect(try await pair.grant(grant).revocation == nil)
    }

    @Test("A leeway retry forgets the successor it retires, which a later use finds reused")
    func retryForgetsTheRetiredSuccessor() async throws {
        let pair = try await Pair(leeway: .seconds(30))
        let (token, grant) = try await pair.signIn()
        let first = await pair.writer.handle(request: Self.refresh(token))
        let lost = try #require(
            ((Shared.json(first)["data"] as? [String: Any])?["credential"] as? [String: Any])?["refresh_token"]
                as? String
        )
        let lostDigest = try #require(OpaqueToken(presented: lost, as: .refreshToken)).digest
        #expect(pair.writerStore.rememberedRefreshToken(lostDigest) != nil)
        // The answer was lost; the app retries with the token it had.
        pair.clock.advance(by: 5)
        #expect(await pair.writer.handle(request: Self.refresh(token)).status == 200)
        #expect(pair.writerStore.rememberedRefreshToken(lostDigest) == nil, "the retired successor is forgotten")
        let reuse = await pair.writer.handle(request: Self.refresh(lost))
        #expect(reuse.status == 400)
        #expect(try await pair.grant(grant).revocation?.reason == .refreshTokenReused)
    }

    @Test("A grant revoked through another instance refuses its token at the writer, and nothing is written")
    func revokedGrantAtItsWriter() async throws {
        let pair = try await Pair()
        let (token, grant) = try await pair.signIn()
        _ = try await pair.other.revokeGrant(grant)
        let before = try await pair.otherStore.dumpRecords()
        let response = await pair.writer.handle(request: Self.refresh(token))
        #expect(response.status == 400)
        #expect(Shared.json(response)["error"] as? String == "invalid_grant")
        #expect(try await pair.otherStore.dumpRecords() == before)
    }

    @Test(
        "A code another instance deleted is refused at its writer as unknown, as elsewhere, and creates nothing",
        arguments: [true, false]
    )
    func codeDeletedElsewhere(byAccountRevocation: Bool) async throws {
        let pair = try await Pair()
        let (code, verifier) = try await pair.issueCode()
        let (control, controlVerifier) = try await pair.issueCode()
        if byAccountRevocation {
            // O-3: the account's revocation removes its unredeemed codes.
            pair.clock.advance(by: 1)
            _ = try await pair.other.revokeAllGrants(of: Shared.account)
        } else {
            // Pruned by an instance whose clock is two minutes ahead.
            _ = try await pair.otherStore.removeExpired(at: pair.clock.now().addingTimeInterval(120))
        }
        let atOther = await pair.other.handle(request: Shared.exchange(code: control, verifier: controlVerifier))
        let atWriter = await pair.writer.handle(request: Shared.exchange(code: code, verifier: verifier))
        #expect(atOther.status == 400)
        #expect(atWriter.status == 400)
        #expect(pair.otherObserver.refusals == [.codeNotFound])
        #expect(pair.writerObserver.refusals == [.codeNotFound], "not the expired code the redemption's .notFound is")
        #expect(try await pair.otherStore.grants(of: Shared.account).isEmpty)
    }

    // MARK: The round trip saved

    @Test("An exchange or a refresh at the instance that wrote the record skips the lookup's round trip")
    func writerSkipsTheLookup() async throws {
        let pair = try await Pair()
        try await pair.warmUp()
        let used = pair.writerStore.statistics.rememberedRecordsUsed
        let (code, verifier) = try await pair.issueCode()
        let (atWriter, exchanged) = try await pair.roundTrips(of: pair.writerStore) {
            await pair.writer.handle(request: Shared.exchange(code: code, verifier: verifier))
        }
        #expect(exchanged.status == 200)
        #expect(atWriter == 1, "the redemption alone")
        let token = try #require(
            ((Shared.json(exchanged)["data"] as? [String: Any])?["credential"] as? [String: Any])?["refresh_token"]
                as? String
        )
        let (refreshed, response) = try await pair.roundTrips(of: pair.writerStore) {
            await pair.writer.handle(request: Self.refresh(token))
        }
        #expect(response.status == 200)
        #expect(refreshed == 1, "the rotation alone")
        #expect(pair.writerStore.statistics.rememberedRecordsUsed == used + 2)

        // Another instance never wrote them, so it reads them first.
        let (code2, verifier2) = try await pair.issueCode()
        let (atOther, _) = try await pair.roundTrips(of: pair.otherStore) {
            await pair.other.handle(request: Shared.exchange(code: code2, verifier: verifier2))
        }
        #expect(atOther == 2, "the lookup and the redemption")
    }

    @Test(
        "At the writer, a redemption or a rotation that waits out connectionWaitTimeout is answered 503 after that one wait, not read again"
    )
    func unavailableWriteIsNotReadAgain() async throws {
        let pair = try await Pair(writerConnectionWait: .milliseconds(300))
        let (code, verifier) = try await pair.issueCode()
        let (token, _) = try await pair.signIn()
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let holder = try await PostgresTimeoutTests.occupyConnection(of: pair.writerStore, until: latch)
        let before = try await pair.otherStore.recordsSnapshot()
        try await latch.whileClosed {
            // The writer's one connection is held: its redemption and its rotation of the records it
            // remembers wait for it, give up, and are answered as they are — a lookup after them would
            // wait for the same connection a second time.
            for (request, write) in [
                (Shared.exchange(code: code, verifier: verifier), BackendOperation.redeemCode),
                (Self.refresh(token), .rotateRefreshToken),
            ] {
                let mark = pair.writerObserver.events.count
                let response = await pair.writer.handle(request: request)
                #expect(response.status == 503)
                let failures = pair.writerObserver.events.dropFirst(mark).filter { $0.backendOperation != nil }
                #expect(failures.map(\.backendOperation) == [write])
                let error = failures.first?.backendError as? PostgresError
                #expect(
                    error?.kind == .poolTimeout && error?.backendWasUnavailable == true,
                    "\(String(describing: error))"
                )
            }
        }
        try await holder.value
        #expect(try await pair.otherStore.recordsSnapshot() == before)
        // Nothing was sent: both go through once the connection is free.
        #expect(await pair.writer.handle(request: Shared.exchange(code: code, verifier: verifier)).status == 200)
        #expect(await pair.writer.handle(request: Self.refresh(token)).status == 200)
    }

    @Test(
        "A rotation answered superseded whose lookup then finds the store closed is not taken for an unavailable backend: the read decides"
    )
    func supersededRotationThenClosedStore() async throws {
        let pair = try await Pair()
        let (token, _) = try await pair.signIn()
        // Rotated through the other instance: the writer's record is stale, and the writer's rotation of
        // it is answered superseded — after which the store looks the token up, in a second operation.
        #expect(await pair.other.handle(request: Self.refresh(token)).status == 200)
        let latch = try await PostgresLatch.make()
        defer { latch.close() }
        let schema = pair.writerStore.configuration.schema
        let locker = try await PostgresTimeoutTests.makeStore(
            schema: schema,
            statementTimeout: PostgresLatch.holdingStatementTimeout
        )
        let quotedSchema = pair.writerStore.configuration.quotedSchema
        let holder = Task {
            defer { locker.close() }
            try await locker.execute(
                script: latch.holdingScript(after: "LOCK TABLE \(quotedSchema).grants IN EXCLUSIVE MODE")
            )
        }
        try await latch.waitUntilHeld(schema: schema)
        let mark = pair.writerObserver.events.count
        let refresh = Task { await pair.writer.handle(request: Self.refresh(token)) }
        // The rotation waits for the grants' lock on the server, sent; the store closes meanwhile, so the
        // lookup after its answer finds no connection.
        try await latch.watcher.waitUntilWaitingForALock(schema: schema)
        pair.writerStore.close()
        try await latch.open()
        let response = await refresh.value
        try await holder.value
        #expect(response.status == 503)
        let failures = pair.writerObserver.events.dropFirst(mark).filter { $0.backendOperation != nil }
        // The rotation was sent and answered: its failure is no unavailable backend, so the engine reads,
        // and the read's failure is the answer, as at a reader.
        #expect(failures.map(\.backendOperation) == [.loadRefreshToken], "\(failures.map(\.description))")
    }

    @Test("A store remembers at most rememberedRecords records, the latest, and none with 0")
    func rememberedRecordsAreBounded() async throws {
        let bounded = try await Pair(rememberedRecords: 2)
        try await bounded.warmUp()
        var codes: [(code: String, verifier: String)] = []
        for _ in 0..<3 { codes.append(try await bounded.issueCode()) }
        #expect(bounded.writerStore.rememberedRecordCount == 2, "the three codes and the warm-up's records")
        let (first, _) = try await bounded.roundTrips(of: bounded.writerStore) {
            await bounded.writer.handle(request: Shared.exchange(code: codes[0].code, verifier: codes[0].verifier))
        }
        #expect(first == 2, "the oldest code was forgotten")
        let (last, _) = try await bounded.roundTrips(of: bounded.writerStore) {
            await bounded.writer.handle(request: Shared.exchange(code: codes[2].code, verifier: codes[2].verifier))
        }
        #expect(last == 1)

        let off = try await Pair(rememberedRecords: 0)
        try await off.warmUp()
        let (code, verifier) = try await off.issueCode()
        let (trips, response) = try await off.roundTrips(of: off.writerStore) {
            await off.writer.handle(request: Shared.exchange(code: code, verifier: verifier))
        }
        #expect(response.status == 200)
        #expect(trips == 2)
        #expect(off.writerStore.rememberedRecordCount == 0)
    }
}
#endif
