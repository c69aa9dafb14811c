// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

/// `GrantStore`'s "Remembered records": a store may answer the codes and refresh tokens it wrote from
/// memory, stale by design. The engine goes forward on one only as far as the atomic write and decides
/// every other answer on the record read from the store — so a stale record changes no answer. The
/// records are planted in the harness's `FaultInjectingStore`, the store's own copies changed behind them.
struct RememberedRecordTests {
    /// Another instance on `harness`'s records, reading every record straight from the store: where the
    /// other requests of a history go.
    private func readingInstance(of harness: Harness, configuration: EngineConfiguration) throws -> AuthEngine {
        try AuthEngine(
            configuration: configuration,
            store: harness.memory,
            accounts: harness.accounts,
            rateLimiter: InMemoryRateLimiter(capacity: 100_000),
            timeSource: harness.clock,
            randomSource: SeededRandomSource(seed: 0xA11)
        )
    }

    /// The stored code of `code`, as its insert wrote it.
    private func storedCode(_ code: String, _ harness: Harness) async throws -> AuthorizationCode {
        let digest = try #require(OpaqueToken(presented: code, as: .authorizationCode)).digest
        return try #require(try await harness.memory.authorizationCode(digest))
    }

    /// The stored refresh token `token` and its grant, as they stand.
    private func storedToken(_ token: String, _ harness: Harness) async throws -> RefreshTokenLookup {
        let digest = try #require(OpaqueToken(presented: token, as: .refreshToken)).digest
        return try #require(try await harness.memory.refreshToken(digest))
    }

    @Test("A remembered code that passes its checks is redeemed without reading it from the store")
    func rememberedCodeSkipsTheRead() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.faults.remember(try await storedCode(code, harness))
        let calls = harness.faults.callCount
        let response = await harness.exchange(code: code, verifier: verifier)
        #expect(response.status == 200)
        #expect(harness.faults.callCount - calls == 1, "the redemption alone")
    }

    @Test("A remembered code its checks refuse is read from the store before the refusal")
    func refusalOnARememberedCodeReadsIt() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        harness.faults.remember(try await storedCode(code, harness))
        let (before, calls) = (harness.memory.snapshot(), harness.faults.callCount)
        // The wrong verifier fails on the remembered record; the refusal waits for the read.
        let response = await harness.exchange(code: code, verifier: harness.newVerifier())
        #expect(response.status == 400)
        #expect(harness.faults.callCount - calls == 1, "the read alone")
        #expect(harness.memory.snapshot() == before)
    }

    @Test(
        "A conformance world's store reads when a read's failure waits; a test's store goes on remembering",
        arguments: [true, false]
    )
    func awaitedReadFailure(readsWhenAReadFailureWaits: Bool) async throws {
        let harness = try Harness()
        let faults = FaultInjectingStore(harness.memory, readsWhenAReadFailureWaits: readsWhenAReadFailureWaits)
        let engine = try AuthEngine(
            store: faults,
            accounts: harness.accounts,
            rateLimiter: InMemoryRateLimiter(capacity: 100_000),
            timeSource: harness.clock,
            randomSource: harness.random
        )
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        faults.remember(try await storedCode(code, harness))
        faults.failNext(.authorizationCode)
        let response = await harness.exchange(code: code, verifier: verifier, on: engine)
        #expect(response.status == (readsWhenAReadFailureWaits ? 503 : 200))
    }

    @Test(
        "A used code remembered unused, replayed with proof, revokes its grant as a fresh read does",
        arguments: [(false, false), (true, false), (false, true), (true, true)]
    )
    func staleCodeReplay(accountInactive: Bool, codeExpired: Bool) async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let unused = try await storedCode(code, harness)
        #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
        harness.faults.remember(unused)
        if accountInactive { harness.accounts.setStatus(.inactive, of: Harness.account) }
        if codeExpired { harness.clock.advance(by: 3_600) }
        let replay = await harness.exchange(code: code, verifier: verifier)
        #expect(replay.status == 400)
        #expect(replay.errorCode == "invalid_grant")
        #expect(harness.observer.revocations.map(\.1) == [.codeReplayed])
    }

    @Test(
        "A rotated refresh token remembered current, presented again, revokes its grant as a fresh read does",
        arguments: [false, true]
    )
    func staleTokenReuse(accountInactive: Bool) async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let current = try await storedToken(token, harness)
        #expect(await harness.refresh(token).status == 200)
        harness.faults.remember(current)
        if accountInactive { harness.accounts.setStatus(.inactive, of: Harness.account) }
        let reuse = await harness.refresh(token)
        #expect(reuse.status == 400)
        #expect(reuse.errorCode == "invalid_grant")
        #expect(harness.observer.revocations.map(\.1) == [.refreshTokenReused])
    }

    // How many rotations a refresh on a remembered record may make is `ExchangeStateMachineTests.contention`.
    @Test("Within the leeway, a rotated token remembered current is retried, as a fresh read retries it")
    func staleTokenRetry() async throws {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(30)))
        let token = try #require(try await harness.signIn().refreshToken)
        let current = try await storedToken(token, harness)
        #expect(await harness.refresh(token).status == 200)
        harness.faults.remember(current)
        harness.clock.advance(by: 5)
        let retry = await harness.refresh(token)
        #expect(retry.status == 200)
        #expect(harness.observer.revocations.isEmpty)
    }

    @Test("A refresh token remembered live, whose grant was revoked since, is refused and changes nothing")
    func staleTokenOfARevokedGrant() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let current = try await storedToken(token, harness)
        _ = try await harness.engine.revokeGrant(current.grant.id)
        harness.faults.remember(current)
        let before = harness.memory.snapshot()
        let response = await harness.refresh(token)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_grant")
        #expect(harness.memory.snapshot() == before)
    }

    // MARK: The same answers as a fresh read

    /// A history, then one request whose record is — or, `remembering`, is also remembered as it was
    /// written, stale by then.
    enum History: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case codeReplayed, codeReplayedAccountInactive, codeReplayedExpired
        case codeOfARevokedAccount, codePrunedByAClockAhead, codeUnused
        case tokenReused, tokenReusedAccountInactive, tokenRetriedWithinLeeway, tokenRetriedWithSession
        case tokenReusedPastLeeway, tokenOfARevokedGrant, tokenOfARevokedAccount, tokenPrunedByAClockAhead
        case tokenRetiredByARetry, tokenUnused

        var testDescription: String { rawValue }

        var leeway: Duration {
            switch self {
            case .tokenRetriedWithinLeeway, .tokenRetriedWithSession, .tokenReusedPastLeeway, .tokenRetiredByARetry:
                .seconds(30)
            default: .zero
            }
        }
    }

    /// What fails when the request comes: the store's writes only — a standby promoted, a full disk, a
    /// lock waited on past the statement timeout — while its reads answer.
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case none
        /// The redemption or rotation the request would write fails.
        case writeFails
        /// So does the revocation a replay or a reuse asks for.
        case writesFail
        /// The redemption or rotation commits, and its answer is lost.
        case commitLost
        /// The backend is unavailable from the request on (`BackendAvailabilityError`): the read fails
        /// so, and on a remembering instance the write it goes forward to as well.
        case backendUnavailable

        var testDescription: String { rawValue }

        /// The faults after which a remembered record gets exactly a read's status and events. With the
        /// backend unavailable the status is the same, and the failure reported is the call that found
        /// it so: `backendUnavailable`.
        static let answeredAsRead: [Fault] = [.none, .writeFails, .writesFail, .commitLost]
    }

    /// What one request did: its status, the events it raised, the faults it met, and whether it left
    /// the store as it found it.
    private struct Answer {
        var status: Int
        var events: [SecurityEvent]
        var faults: [FaultInjectingStore.Operation]
        var storeUnchanged: Bool
    }

    /// The request's status and the events it raised, after `history`, with `fault`.
    private func answer(
        after history: History,
        remembering: Bool,
        fault: Fault = .none
    ) async throws -> (Int, [String]) {
        let answer = try await observed(after: history, remembering: remembering, fault: fault)
        return (answer.status, answer.events.map(\.description))
    }

    /// What the request did after `history`, with `fault`.
    private func observed(
        after history: History,
        remembering: Bool,
        fault: Fault = .none
    ) async throws -> Answer {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: history.leeway))
        func outcome(_ request: () async -> TestResponse) async -> Answer {
            let isCode = history.rawValue.hasPrefix("code")
            let write: FaultInjectingStore.Operation = isCode ? .redeemCode : .rotateRefreshToken
            switch fault {
            case .none: break
            case .writeFails: harness.faults.failNext(write)
            case .writesFail:
                harness.faults.failNext(write)
                harness.faults.failNext(.revokeGrant)
            case .commitLost: harness.faults.failNextAfterCommitting(write)
            case .backendUnavailable:
                if remembering { harness.faults.failNextAsUnavailable(write) }
                harness.faults.failNextAsUnavailable(isCode ? .authorizationCode : .refreshToken)
            }
            let (mark, faults, before) =
                (harness.observer.events.count, harness.faults.injectedFaults.count, harness.memory.snapshot())
            let response = await request()
            return Answer(
                status: response.status,
                events: Array(harness.observer.events.dropFirst(mark)),
                faults: Array(harness.faults.injectedFaults.dropFirst(faults)),
                storeUnchanged: harness.memory.snapshot() == before
            )
        }
        if history.rawValue.hasPrefix("code") {
            let verifier = harness.newVerifier()
            let code = try await harness.issueCode(verifier: verifier)
            let written = try await storedCode(code, harness)
            switch history {
            case .codeOfARevokedAccount:
                harness.clock.advance(by: 1)
                _ = try await harness.engine.revokeAllGrants(of: Harness.account)
            case .codePrunedByAClockAhead:
                _ = try await harness.memory.removeExpired(at: harness.clock.now().addingTimeInterval(120))
            case .codeUnused:
                break
            default:
                #expect(await harness.exchange(code: code, verifier: verifier).status == 200)
                if history == .codeReplayedAccountInactive {
                    harness.accounts.setStatus(.inactive, of: Harness.account)
                }
                if history == .codeReplayedExpired { harness.clock.advance(by: 3_600) }
            }
            if remembering { harness.faults.remember(written) }
            return await outcome { await harness.exchange(code: code, verifier: verifier) }
        }
        let token = try #require(try await harness.signIn().refreshToken)
        var presented = token
        var written = try await storedToken(token, harness)
        switch history {
        case .tokenOfARevokedGrant:
            _ = try await harness.engine.revokeGrant(written.grant.id)
        case .tokenOfARevokedAccount:
            harness.clock.advance(by: 1)
            _ = try await harness.engine.revokeAllGrants(of: Harness.account)
        case .tokenPrunedByAClockAhead:
            _ = try await harness.memory.removeExpired(at: harness.clock.now().addingTimeInterval(40 * 86_400))
        case .tokenRetiredByARetry:
            // Rotated to a successor whose answer was lost; the retry within the leeway retires it, and
            // then it comes back, remembered as its rotation wrote it: current.
            let lost = try #require(await harness.refresh(token).refreshToken)
            written = try await storedToken(lost, harness)
            harness.clock.advance(by: 2)
            #expect(await harness.refresh(token).status == 200)
            presented = lost
        case .tokenUnused:
            break
        default:
            #expect(await harness.refresh(token).status == 200)
            if history == .tokenReusedAccountInactive { harness.accounts.setStatus(.inactive, of: Harness.account) }
            if history == .tokenRetriedWithinLeeway || history == .tokenRetriedWithSession {
                harness.clock.advance(by: 5)
            }
            if history == .tokenReusedPastLeeway { harness.clock.advance(by: 40) }
        }
        if remembering { harness.faults.remember(written) }
        return await outcome {
            await harness.refresh(presented, studioSession: history == .tokenRetriedWithSession ? true : nil)
        }
    }

    @Test(
        "After any history, with any fault of the writes, a remembered record gets the status and events a read gets",
        arguments: History.allCases,
        Fault.answeredAsRead
    )
    func sameAnswers(after history: History, fault: Fault) async throws {
        let read = try await answer(after: history, remembering: false, fault: fault)
        let remembered = try await answer(after: history, remembering: true, fault: fault)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
    }

    @Test(
        "After any history, a remembered record's write that finds the backend unavailable is answered 503 at once, without a read, as a reader's read that finds it so",
        arguments: History.allCases
    )
    func unavailableBackend(after history: History) async throws {
        let read = try await observed(after: history, remembering: false, fault: .backendUnavailable)
        let remembered = try await observed(after: history, remembering: true, fault: .backendUnavailable)
        let (write, lookup): (FaultInjectingStore.Operation, FaultInjectingStore.Operation) =
            history.rawValue.hasPrefix("code")
            ? (.redeemCode, .authorizationCode) : (.rotateRefreshToken, .refreshToken)
        #expect(read.status == 503 && read.faults == [lookup])
        #expect(remembered.status == read.status)
        #expect(read.storeUnchanged && remembered.storeUnchanged)
        // Either the copy went forward to the write, which found the backend unavailable and answered at
        // once, or its checks refused it and the read decided — and failed as the reader's did. Never
        // both: the read after an unavailable write would only wait for the backend a second time.
        #expect(remembered.faults == [write] || remembered.faults == [lookup], "\(remembered.faults)")
        // The same events, the failure reported of the call that met it.
        #expect(remembered.events.map(\.kind) == read.events.map(\.kind))
        let failedCalls = remembered.events.compactMap(\.backendOperation).map(\.rawValue)
        if remembered.faults == [write] {
            #expect(
                failedCalls.count == 1
                    && failedCalls.allSatisfy { $0.hasPrefix(write == .redeemCode ? "redeem" : "rotate") }
            )
        } else {
            #expect(failedCalls == read.events.compactMap(\.backendOperation).map(\.rawValue))
        }
    }

    // MARK: The account directory

    /// A directory that counts its calls and fails the first `failures` of them.
    private final class CountingDirectory: AccountDirectory {
        let base: InMemoryAccountDirectory
        let failures: Int
        let calls = LockedValue(0)

        init(_ base: InMemoryAccountDirectory, failing failures: Int) {
            self.base = base
            self.failures = failures
        }

        func status(of account: AccountID) async throws -> AccountStatus {
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call <= failures { throw CancellationError() }
            return base.statusNow(of: account)
        }
    }

    /// An exchange of an unused code, the account inactive or the directory failing once: the status,
    /// the events, and how many times the directory was asked.
    private func exchange(
        remembering: Bool,
        accountInactive: Bool,
        directoryFailures: Int
    ) async throws -> (Int, [String], Int) {
        let harness = try Harness()
        let directory = CountingDirectory(harness.accounts, failing: directoryFailures)
        let engine = try AuthEngine(
            store: harness.faults,
            accounts: directory,
            rateLimiter: InMemoryRateLimiter(capacity: 100_000),
            observer: harness.observer,
            timeSource: harness.clock,
            randomSource: harness.random
        )
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        if remembering { harness.faults.remember(try await storedCode(code, harness)) }
        if accountInactive { harness.accounts.setStatus(.inactive, of: Harness.account) }
        let mark = harness.observer.events.count
        let response = await harness.exchange(code: code, verifier: verifier, on: engine)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        return (response.status, events, directory.calls.withLock { $0 })
    }

    @Test(
        "On a remembered record the account directory is asked once, and its failure answered and reported as on a read",
        arguments: [(true, 0), (false, 1)]
    )
    func directoryAskedOnce(accountInactive: Bool, directoryFailures: Int) async throws {
        let read = try await exchange(
            remembering: false,
            accountInactive: accountInactive,
            directoryFailures: directoryFailures
        )
        let remembered = try await exchange(
            remembering: true,
            accountInactive: accountInactive,
            directoryFailures: directoryFailures
        )
        #expect(read.0 == (accountInactive ? 403 : 503))
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
        #expect(remembered.2 == 1)
        #expect(read.2 == 1)
    }

    // MARK: Writes whose answer waits for a read

    /// A code of an account revoked at or after its issue, stored anyway — its insert committed after the
    /// revocation removed the account's codes, from an instance whose clock is behind: the redemption
    /// finds nothing (`.notFound`), and a read finds the code unused. The status, the events, and the
    /// store's calls.
    private func exchangeOfALateCode(remembering: Bool) async throws -> (Int, [String], calls: Int) {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let written = try await storedCode(code, harness)
        harness.clock.advance(by: 1)
        _ = try await harness.engine.revokeAllGrants(of: Harness.account)
        try await harness.memory.insertCode(written)
        if remembering { harness.faults.remember(written) }
        let (mark, callsBefore) = (harness.observer.events.count, harness.faults.callCount)
        let response = await harness.exchange(code: code, verifier: verifier)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        return (response.status, events, harness.faults.callCount - callsBefore)
    }

    @Test("A redemption on a remembered code that finds nothing is not attempted again when a read finds the code")
    func redemptionAttemptedOnce() async throws {
        let read = try await exchangeOfALateCode(remembering: false)
        let remembered = try await exchangeOfALateCode(remembering: true)
        #expect(read.calls == 2, "the read and the redemption")
        #expect(remembered.calls == read.calls, "the redemption and the read")
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
    }

    /// A refresh of `T` (leeway 30 s) whose rotation `T → A` commits and whose answer is lost; before it
    /// would have arrived, the app's retry of `T` rotates `A → B` — retiring `A`, and moving `T`'s
    /// successor on to `B` — and `B` is refreshed. The status, the events, and whether the grant lives.
    private func refreshWithALostCommit(remembering: Bool) async throws -> (Int, [String], live: Bool) {
        let leeway = EngineConfiguration(refreshTokenReuseLeeway: .seconds(30))
        let harness = try Harness(configuration: leeway)
        let other = try readingInstance(of: harness, configuration: leeway)
        let token = try #require(try await harness.signIn().refreshToken)
        let written = try await storedToken(token, harness)
        if remembering { harness.faults.remember(written) }
        let meanwhile = LockedValue<[Int]>([])
        harness.faults.failNextAfterCommitting(.rotateRefreshToken) {
            let retry = await harness.refresh(token, on: other)
            var statuses = [retry.status]
            if let next = retry.refreshToken { statuses.append(await harness.refresh(next, on: other).status) }
            meanwhile.withLock { $0 = statuses }
        }
        let mark = harness.observer.events.count
        let response = await harness.refresh(token)
        #expect(meanwhile.withLock { $0 } == [200, 200])
        let grant = try await harness.memory.grant(written.grant.id)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        return (response.status, events, grant?.revocation == nil)
    }

    @Test("A rotation whose commit was lost answers its failure, whatever a retry did since, and revokes nothing")
    func lostCommitThenRetry() async throws {
        let read = try await refreshWithALostCommit(remembering: false)
        let remembered = try await refreshWithALostCommit(remembering: true)
        #expect(read.0 == 503)
        #expect(read.live)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
        #expect(remembered.live, "the user's grant revoked as a reuse of its own rotation")
    }

    /// A lost commit that the presented token's own record shows — rotated to the successor this
    /// request stored — is told without reading the successor: one read after the write, and the answer
    /// is the write's failure even if a read of the successor would have failed.
    @Test("A lost rotation commit the token's record shows is answered without reading the successor")
    func lostCommitToldByTheTokensRecord() async throws {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        harness.faults.remember(try await storedToken(token, harness))
        harness.faults.failNextAfterCommitting(.rotateRefreshToken)
        // The read of the token succeeds; a read of the successor, were it made, would fail.
        harness.faults.failCall(number: 3)
        let (calls, mark) = (harness.faults.callCount, harness.observer.events.count)
        let response = await harness.refresh(token)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        #expect(response.status == 503)
        #expect(harness.faults.callCount - calls == 2, "the rotation and the token's read")
        #expect(events.first?.hasPrefix("backendFailed operation=rotate_refresh_token") == true, "\(events)")
    }

    // MARK: Reads that fail after a write that failed

    /// `T` rotated 40 seconds before the request, past a 30-second leeway: a reuse. `T` is remembered as
    /// written; the request's rotation on it fails, writing nothing, and `failing` calls after it fail
    /// too — the read (call 2), or the read of the successor that would tell a lost commit (call 3).
    private func reuseAfterAFailedRotation(
        remembering: Bool,
        failing call: Int?
    ) async throws -> (Int, [String], live: Bool) {
        let harness = try Harness(configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(30)))
        let token = try #require(try await harness.signIn().refreshToken)
        let written = try await storedToken(token, harness)
        #expect(await harness.refresh(token).status == 200)
        harness.clock.advance(by: 40)
        if remembering {
            harness.faults.remember(written)
            harness.faults.failNext(.rotateRefreshToken)
        }
        // A reader makes the read first: its call 1 is the remembered path's call 2.
        if let call { harness.faults.failCall(number: remembering ? call : call - 1) }
        let mark = harness.observer.events.count
        let response = await harness.refresh(token)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        return (response.status, events, try await harness.memory.grant(written.grant.id)?.revocation == nil)
    }

    @Test("After a failed rotation, a failed read is answered as a reader's failed read")
    func failedRotationThenFailedRead() async throws {
        let read = try await reuseAfterAFailedRotation(remembering: false, failing: 2)
        let remembered = try await reuseAfterAFailedRotation(remembering: true, failing: 2)
        #expect(read.0 == 503)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1, "the read's failure, not the rotation's")
        #expect(remembered.live && read.live)
    }

    @Test("After a failed rotation, a reuse the read shows is revoked unless the successor's read fails")
    func failedRotationThenReuse() async throws {
        let read = try await reuseAfterAFailedRotation(remembering: false, failing: nil)
        let remembered = try await reuseAfterAFailedRotation(remembering: true, failing: nil)
        #expect(read.0 == 400)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
        #expect(!remembered.live)

        // The successor's read fails: whether the rotation committed cannot be told, and the answer is
        // a reader's whose read failed, revoking nothing.
        let unsure = try await reuseAfterAFailedRotation(remembering: true, failing: 3)
        #expect(unsure.0 == 503)
        #expect(unsure.1.first?.hasPrefix("backendFailed operation=load_refresh_token") == true, "\(unsure.1)")
        #expect(unsure.live)
    }

    // MARK: A lost commit, told by the successor's own record

    /// What happens, in the meanwhile of a lost rotation commit, before the read.
    enum AfterALostCommit: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The presented token, refreshed in the last second of its idle lifetime, is pruned at its
        /// expiry; its successor and its grant live.
        case presentedTokenPruned
        /// The app's retry reaches an instance with a 30-second leeway — a configuration being rolled
        /// out — which moves the presented token's successor on.
        case retriedWithALeewayElsewhere

        var testDescription: String { rawValue }
    }

    /// A strict instance's refresh whose rotation commits and loses its answer, then `meanwhile`: the
    /// status, the events, and whether the grant lives.
    private func strictRefresh(
        remembering: Bool,
        losingItsCommit meanwhile: AfterALostCommit
    ) async throws -> (Int, [String], live: Bool) {
        let harness = try Harness()
        let token = try #require(try await harness.signIn().refreshToken)
        let written = try await storedToken(token, harness)
        if remembering { harness.faults.remember(written) }
        switch meanwhile {
        case .presentedTokenPruned:
            harness.clock.advance(by: 30 * 86_400 - 1)
            harness.faults.failNextAfterCommitting(.rotateRefreshToken) {
                _ = try? await harness.memory.removeExpired(at: harness.clock.now().addingTimeInterval(5))
            }
        case .retriedWithALeewayElsewhere:
            let elsewhere = try readingInstance(
                of: harness,
                configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(30))
            )
            harness.faults.failNextAfterCommitting(.rotateRefreshToken) {
                _ = await harness.refresh(token, on: elsewhere)
            }
        }
        let mark = harness.observer.events.count
        let response = await harness.refresh(token)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        return (response.status, events, try await harness.memory.grant(written.grant.id)?.revocation == nil)
    }

    @Test(
        "Under strict rotation too, a lost commit is told by its successor's record, whatever happened since",
        arguments: AfterALostCommit.allCases
    )
    func strictLostCommit(then meanwhile: AfterALostCommit) async throws {
        let read = try await strictRefresh(remembering: false, losingItsCommit: meanwhile)
        let remembered = try await strictRefresh(remembering: true, losingItsCommit: meanwhile)
        #expect(read.0 == 503)
        #expect(read.live)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
        #expect(remembered.live)
    }

    // MARK: The cases of the review of 2026-12-05, evening

    enum WriteFault: String, CaseIterable, Sendable {
        case none, writeFails, commitLost
    }

    /// A store that starts sessions separately — the protocol's default — refreshes with
    /// `studio_session` a token that is unused or was rotated since (`reused`): the rotation starting a
    /// session answers `nil`, and the plain rotation follows it on the remembered path too. The status,
    /// the events, and whether the grant lives.
    private func refreshWithASeparateSession(
        reused: Bool,
        remembering: Bool,
        fault: WriteFault
    ) async throws -> (Int, [String], live: Bool) {
        let harness = try Harness(startsSessionsSeparately: true)
        let token = try #require(try await harness.signIn().refreshToken)
        let written = try await storedToken(token, harness)
        if reused { #expect(await harness.refresh(token).status == 200) }
        if remembering { harness.faults.remember(written) }
        switch fault {
        case .none: break
        case .writeFails: harness.faults.failNext(.rotateRefreshToken)
        case .commitLost: harness.faults.failNextAfterCommitting(.rotateRefreshToken)
        }
        let mark = harness.observer.events.count
        let response = await harness.refresh(token, studioSession: true)
        let events = harness.observer.events.dropFirst(mark).map(\.description)
        return (response.status, events, try await harness.memory.grant(written.grant.id)?.revocation == nil)
    }

    @Test(
        "On a store that starts sessions separately, a remembered token gets a reader's answer, events and revocation",
        arguments: [false, true],
        WriteFault.allCases
    )
    func separateSessionStart(reused: Bool, fault: WriteFault) async throws {
        let read = try await refreshWithASeparateSession(reused: reused, remembering: false, fault: fault)
        let remembered = try await refreshWithASeparateSession(reused: reused, remembering: true, fault: fault)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1)
        #expect(remembered.live == read.live)
    }

    /// A remembered unused code whose redemption fails and whose read then fails, against a reader whose
    /// read fails: the status and the events.
    private func exchangeWithAFailedRead(remembering: Bool) async throws -> (Int, [String]) {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        if remembering {
            harness.faults.remember(try await storedCode(code, harness))
            harness.faults.failNext(.redeemCode)
        }
        harness.faults.failNext(.authorizationCode)
        let mark = harness.observer.events.count
        let response = await harness.exchange(code: code, verifier: verifier)
        return (response.status, harness.observer.events.dropFirst(mark).map(\.description))
    }

    @Test("After a failed redemption, a failed read of the code is reported as a reader's failed read")
    func failedRedemptionThenFailedRead() async throws {
        let read = try await exchangeWithAFailedRead(remembering: false)
        let remembered = try await exchangeWithAFailedRead(remembering: true)
        #expect(read.0 == 503)
        #expect(remembered.0 == read.0)
        #expect(remembered.1 == read.1, "the code's read, not the redemption")
    }

    /// A 30-second leeway; `T` rotated through another instance, so stale where remembered; then before
    /// two of the engine's rotations after its first look at `T` — a reader's read is its first look, the
    /// remembered path's first rotation is its — the other instance retries `T`, moving its successor on.
    private func contendedRetry(remembering: Bool) async throws -> (Int, [String]) {
        let leeway = EngineConfiguration(refreshTokenReuseLeeway: .seconds(30))
        let harness = try Harness(configuration: leeway)
        let other = try readingInstance(of: harness, configuration: leeway)
        let token = try #require(try await harness.signIn().refreshToken)
        let written = try await storedToken(token, harness)
        #expect(await harness.refresh(token, on: other).status == 200)
        if remembering { harness.faults.remember(written) }
        let contended: Set<Int> = remembering ? [2, 3] : [1, 2]
        harness.faults.beforeEachRotation { rotation in
            if contended.contains(rotation) { _ = await harness.refresh(token, on: other) }
        }
        let mark = harness.observer.events.count
        let response = await harness.refresh(token)
        return (response.status, harness.observer.events.dropFirst(mark).map(\.description))
    }

    @Test("Under contention, a stale remembered token is rotated as often after its first look as a read one")
    func contendedRetryOfAStaleRecord() async throws {
        let read = try await contendedRetry(remembering: false)
        let remembered = try await contendedRetry(remembering: true)
        #expect(read.0 == 200, "\(read)")
        #expect(remembered.0 == read.0, "remembered \(remembered), read \(read)")
    }
}
