// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
import TilecastAuthTesting

/// One model-based run: the engine's world, the reference model, and what the checks track.
struct ModelRun {
    let world: ModelWorld
    var model: ReferenceModel
    /// Successful exchanges per code: never more than one.
    var credentialsPerCode: [Int: Int] = [:]
    /// Every verifier and secret seen, to check that none reaches the store.
    var secrets: [String] = []
    /// What the run exercised.
    var statistics = ModelStatistics()
    /// The instance the next operation goes to, counted round the deployment's instances; a concurrent
    /// operation's requests go to it and the ones after.
    var instance = 0

    /// The instance holding the session-start failures the model waits for, when each instance has a
    /// fault-injecting store of its own: operations go to it until they are taken.
    var failureHolder: Int?

    init(leeway: Double, deployment: ModelChecker.Deployment) async throws {
        world = try await ModelWorld(leeway: leeway, deployment: deployment)
        model = ReferenceModel(now: ModelWorld.start.timeIntervalSince1970, leeway: leeway)
    }

    private func account(_ index: Int) -> AccountID { AccountID("account-\(index)") }

    /// The index of the item `age` places from the newest of `count`, or `nil` when there is none.
    private func newest(_ age: Int, of count: Int) -> Int? {
        count == 0 ? nil : count - 1 - age % count
    }

    /// The code an exchange picks: for 0 the newest code not yet redeemed, so that sequences go deep;
    /// otherwise by age among all codes, which reaches replays.
    private func pickCode(_ age: Int) -> Int? {
        if age == 0, let unused = model.codes.lastIndex(where: { $0.redeemedInto == nil }) {
            return unused
        }
        return newest(age, of: model.codes.count)
    }

    /// The refresh token a refresh picks: for 0 the newest current token of a live grant; otherwise by
    /// age among all tokens ever issued, which reaches reuse.
    private func pickRefreshToken(_ age: Int) -> Int? {
        if age == 0,
            let current = model.refreshTokens.indices.last(where: { index in
                model.refreshTokens[index].state == .active && model.isLive(model.refreshTokens[index].grant)
            })
        {
            return current
        }
        return newest(age, of: model.refreshTokens.count)
    }

    // MARK: Operations

    /// Performs one operation on both sides; returns a disagreement, if any.
    mutating func perform(_ operation: ModelOperation) async -> String? {
        switch operation {
        case .issueCode(let index, let forWeb):
            let issued = try? await world.engine(instance).issueTestCode(
                account: account(index),
                using: world.random,
                client: forWeb ? "tilecast-web" : .tilecastIOS,
                redirectURI: forWeb ? ModelWorld.webCallback : ModelWorld.callback
            )
            let active = !model.inactiveAccounts.contains(index)
            guard (issued != nil) == active else { return "issueCode: expected \(active ? "a code" : "a refusal")" }
            if let issued {
                model.codes.append(
                    ReferenceModel.Code(
                        value: issued.code,
                        verifier: issued.verifier,
                        account: index,
                        forWeb: forWeb,
                        issuedAt: model.now
                    )
                )
                secrets += [issued.verifier, issued.code]
            }
            return nil

        case .exchange(let code, let variant):
            return await exchange(code: code, variant: variant)

        case .refresh(let token, let studioSession, let variant):
            return await refresh(token: token, studioSession: studioSession, variant: variant)

        case .concurrentExchange(let code, let count):
            return await concurrentExchange(code: code, count: count)

        case .concurrentRefresh(let token, let count, let studioSession):
            return await concurrentRefresh(token: token, count: count, studioSession: studioSession)

        case .revokeGrant(let pick):
            guard let grant = newest(pick, of: model.grants.count) else { return nil }
            let expected = model.revoke(grant)
            let outcome: String
            switch try? await world.engine(instance).revokeGrant(model.grants[grant].engineID) {
            case .revoked: outcome = "revoked"
            case .alreadyRevoked: outcome = "alreadyRevoked"
            case .notFound: outcome = "notFound"
            case nil: outcome = "error"
            }
            return outcome == expected ? nil : "revokeGrant: expected \(expected), got \(outcome)"

        case .signOut(let pick):
            guard let index = newest(pick, of: model.sessions.count) else { return nil }
            let expected = model.signOut(session: index)
            let outcome = try? await world.engine(instance).signOut(sessionCookieValue: model.sessions[index].value)
            let signedOut = if case .signedOut = outcome { true } else { false }
            return signedOut == expected
                ? nil : "signOut: expected signedOut \(expected), got \(String(describing: outcome))"

        case .signOutWithToken(let pick):
            guard let index = pickRefreshToken(pick) else { return nil }
            let expected = model.signOut(refreshToken: index)
            let outcome = try? await world.engine(instance).signOut(
                token: model.refreshTokens[index].value,
                client: .tilecastIOS
            )
            let signedOut = if case .signedOut = outcome { true } else { false }
            return signedOut == expected
                ? nil : "signOut(token:): expected signedOut \(expected), got \(String(describing: outcome))"

        case .setAccount(let index, let active):
            world.accounts.setStatus(active ? .active : .inactive, of: account(index))
            if active {
                model.inactiveAccounts.remove(index)
            } else {
                model.inactiveAccounts.insert(index)
            }
            return nil

        case .advanceClock(let seconds):
            world.clock.advance(by: seconds)
            model.now += seconds
            return nil

        case .failNextSessionStart:
            let holder = failureHolder ?? instance
            world.faults(of: holder).failNextSessionStart()
            if world.faults.count > 1 { failureHolder = holder }
            model.pendingSessionFailures += 1
            return nil

        case .createWebGrant(let index):
            let issued = try? await world.engine(instance).createGrant(
                account: account(index),
                client: "tilecast-web",
                scope: "tiles:read",
                startsSession: false
            )
            let active = !model.inactiveAccounts.contains(index)
            guard (issued != nil) == active else { return "createGrant: expected \(active ? "a grant" : "a refusal")" }
            if let issued {
                model.createWebGrant(
                    account: index,
                    engineID: issued.grant,
                    accessToken: issued.credential.accessToken.unredactedValue,
                    refreshToken: issued.credential.refreshToken.unredactedValue
                )
                secrets += [
                    issued.credential.accessToken.unredactedValue, issued.credential.refreshToken.unredactedValue,
                ]
            }
            return nil

        case .removeExpired:
            _ = try? await world.records.removeExpired(at: world.clock.now())
            return nil
        }
    }

    /// Lets operations go to any instance again once no session-start failure waits.
    mutating func releaseFailureHolder() {
        if model.pendingSessionFailures == 0 { failureHolder = nil }
    }

    // MARK: Exchanges

    /// The body of an exchange of the `index`-th code formed as `variant`.
    private func exchangeBody(_ index: Int?, _ variant: ModelOperation.Variant) -> [String: String?] {
        let code = index.map { model.codes[$0] }
        var verifier = code?.verifier ?? "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        if variant == .wrongVerifier {
            verifier = model.codes.first { $0.verifier != verifier }?.verifier ?? "z" + verifier.dropFirst()
        }
        return [
            "grant_type": "authorization_code",
            "client_id": variant == .wrongClient ? "tilecast-web" : "tilecast-ios",
            "code": variant == .unknown ? "tcc_" + String(repeating: "A", count: 43) : (code?.value ?? "tcc_none"),
            "redirect_uri": variant == .wrongRedirect ? ModelWorld.callback + "/" : ModelWorld.callback,
            "code_verifier": variant == .malformedVerifier ? "short" : verifier,
        ]
    }

    private mutating func exchange(code pick: Int, variant: ModelOperation.Variant) async -> String? {
        let index = pickCode(pick)
        let (answer, revokes) = model.expectExchange(code: variant == .unknown ? nil : index, variant: variant)
        guard let before = await snapshot() else { return Self.unreadable }
        let observed = ObservedResponse(await world.post(exchangeBody(index, variant), instance: instance))
        statistics.statuses[observed.status, default: 0] += 1
        if let mismatch = observed.mismatch(with: answer) { return "exchange: \(mismatch)" }
        if let index, observed.status == 200 {
            if let message = await learnExchange(code: index, observed) { return message }
        }
        if observed.status == 503 {
            model.pendingSessionFailures -= 1
        }
        if let revokes {
            _ = model.revoke(revokes)
        }
        return observed.status == 200
            ? nil : await refusalChangedNothing(before, revoked: revokes.map { model.grants[$0].engineID })
    }

    /// Records a successful exchange in the model, with the values the engine minted.
    private mutating func learnExchange(code index: Int, _ observed: ObservedResponse) async -> String? {
        credentialsPerCode[index, default: 0] += 1
        guard credentialsPerCode[index]! <= 1 else { return "code \(index) yielded a second credential" }
        guard let access = observed.accessToken, let refresh = observed.refreshToken, let session = observed.sessionID,
            let digest = OpaqueToken(presented: refresh, as: .refreshToken)?.digest,
            let grant = try? await world.records.refreshToken(digest)?.grant.id
        else { return "exchange: a success without a credential, cookie or stored grant" }
        model.redeem(code: index, engineID: grant, accessToken: access, refreshToken: refresh, session: session)
        secrets += [access, refresh, session]
        return nil
    }

    private mutating func concurrentExchange(code pick: Int, count: Int) async -> String? {
        guard let index = pickCode(pick), model.pendingSessionFailures == 0 else { return nil }
        let (answer, revokes) = model.expectExchange(code: index, variant: .valid)
        let body = exchangeBody(index, .valid)
        let (world, first) = (self.world, instance)
        let responses = await withTaskGroup(of: ObservedResponse.self) { group in
            for request in 0..<count {
                group.addTask { ObservedResponse(await world.post(body, instance: first + request)) }
            }
            return await group.reduce(into: [ObservedResponse]()) { $0.append($1) }
        }
        let statuses = responses.map(\.status).sorted()
        for status in statuses {
            statistics.statuses[status, default: 0] += 1
        }
        guard answer.status == 200 else {
            if let revokes { _ = model.revoke(revokes) }
            return statuses.allSatisfy({ $0 == answer.status })
                ? nil : "concurrent exchange: expected all \(answer.status), got \(statuses)"
        }
        guard statuses == [200] + Array(repeating: 400, count: count - 1),
            let winner = responses.first(where: { $0.status == 200 })
        else { return "concurrent exchange: expected one 200 and \(count - 1) × 400, got \(statuses)" }
        if let message = await learnExchange(code: index, winner) { return message }
        // Every loser presented valid proof for a used code: a replay, which revokes the new grant.
        _ = model.revoke(model.grants.count - 1)
        return nil
    }

    // MARK: Refreshes

    private func refreshBody(_ index: Int?, _ variant: ModelOperation.Variant) -> [String: String?] {
        [
            "grant_type": "refresh_token",
            "client_id": variant == .wrongClient ? "tilecast-web" : "tilecast-ios",
            "refresh_token": variant == .unknown || index == nil
                ? "tcr_" + String(repeating: "B", count: 43) : model.refreshTokens[index!].value,
        ]
    }

    private mutating func refresh(
        token pick: Int,
        studioSession: Bool?,
        variant: ModelOperation.Variant
    ) async -> String? {
        let index = pickRefreshToken(pick)
        let variant: ModelOperation.Variant = [.wrongClient, .unknown].contains(variant) ? variant : .valid
        let (answer, revokes, plan) = model.expectRefresh(token: index, studioSession: studioSession, variant: variant)
        guard let before = await snapshot() else { return Self.unreadable }
        let observed = ObservedResponse(
            await world.post(refreshBody(index, variant), studioSession: studioSession, instance: instance)
        )
        statistics.statuses[observed.status, default: 0] += 1
        if let mismatch = observed.mismatch(with: answer) { return "refresh: \(mismatch)" }
        if let plan, observed.status == 200 {
            guard let access = observed.accessToken, let refresh = observed.refreshToken else {
                return "refresh: a success without a credential"
            }
            model.rotate(
                plan,
                studioSession: studioSession,
                accessToken: access,
                refreshToken: refresh,
                session: observed.sessionID
            )
            secrets += [access, refresh] + (observed.sessionID.map { [$0] } ?? [])
        }
        if let revokes {
            _ = model.revoke(revokes)
        }
        return observed.status == 200
            ? nil : await refusalChangedNothing(before, revoked: revokes.map { model.grants[$0].engineID })
    }

    private mutating func concurrentRefresh(token pick: Int, count: Int, studioSession: Bool) async -> String? {
        guard let index = pickRefreshToken(pick), !(studioSession && model.pendingSessionFailures > 0)
        else { return nil }
        let (answer, revokes, plan) = model.expectRefresh(token: index, studioSession: studioSession, variant: .valid)
        let body = refreshBody(index, .valid)
        let (world, first) = (self.world, instance)
        guard let before = await snapshot() else { return Self.unreadable }
        let attemptsBefore = world.rotationAttempts.withLock { $0 }
        let responses = await withTaskGroup(of: ObservedResponse.self) { group in
            for request in 0..<count {
                group.addTask {
                    ObservedResponse(await world.post(body, studioSession: studioSession, instance: first + request))
                }
            }
            return await group.reduce(into: [ObservedResponse]()) { $0.append($1) }
        }
        let statuses = responses.map(\.status).sorted()
        for status in statuses {
            statistics.statuses[status, default: 0] += 1
        }
        guard answer.status == 200, let plan else {
            guard statuses.allSatisfy({ $0 == answer.status }) else {
                return "concurrent refresh: expected all \(answer.status), got \(statuses)"
            }
            if let revokes { _ = model.revoke(revokes) }
            return await refusalChangedNothing(before, revoked: revokes.map { model.grants[$0].engineID })
        }
        if model.leeway > 0 {
            let attempts = world.rotationAttempts.withLock { $0 } - attemptsBefore
            return await learnRefreshesWithinLeeway(
                plan,
                responses,
                studioSession: studioSession,
                before: before,
                rotationAttempts: attempts
            )
        }
        guard statuses == [200] + Array(repeating: 400, count: count - 1),
            let winner = responses.first(where: { $0.status == 200 }),
            let access = winner.accessToken, let refresh = winner.refreshToken
        else { return "concurrent refresh: expected one 200 and \(count - 1) × 400, got \(statuses)" }
        // The losers were refused as reuse, so nothing the burst added is theirs: only the winner's
        // credentials, and its session if it started before a loser's reuse revoked the grant.
        guard let after = await snapshot() else { return Self.unreadable }
        let winners = Set(
            [
                Self.digest(refresh, .refreshToken), Self.digest(access, .accessToken),
                Self.digest(winner.sessionID, .studioSession),
            ]
            .compactMap { $0 }
        )
        guard
            Self.added(\.refreshTokens, from: before, to: after)
                .union(Self.added(\.accessTokens, from: before, to: after))
                .union(Self.added(\.sessions, from: before, to: after)).isSubset(of: winners)
        else { return "concurrent refresh: the store holds credentials besides the winner's" }
        // The winner's session may or may not have started before a loser's reuse revoked the grant.
        model.rotate(
            plan,
            studioSession: winner.sessionID == nil ? nil : true,
            accessToken: access,
            refreshToken: refresh,
            session: winner.sessionID
        )
        secrets += [access, refresh] + (winner.sessionID.map { [$0] } ?? [])
        _ = model.revoke(model.refreshTokens[index].grant)
        return nil
    }

    /// A burst of one token within the reuse leeway (the clock stands still while it runs): every request
    /// is the first rotation or a retry of it, so each succeeds — or, superseded more often than the
    /// engine retries, is told to retry (503) having changed nothing — and none revokes the grant. Which
    /// success rotated last, and whose session replaced the others', depends on scheduling; the store
    /// says, and it must be one of the answers. The model then takes the successes as if they had come
    /// one after another, that one last.
    ///
    /// `before` is the store as the burst found it, and `rotationAttempts` the rotations its requests
    /// sent to the stores.
    private mutating func learnRefreshesWithinLeeway(
        _ plan: ReferenceModel.RefreshPlan,
        _ responses: [ObservedResponse],
        studioSession: Bool,
        before: InMemoryGrantStore.Snapshot,
        rotationAttempts: Int
    ) async -> String? {
        let statuses = responses.map(\.status).sorted()
        let successes = responses.filter { $0.status == 200 }
        guard !successes.isEmpty, statuses.allSatisfy({ $0 == 200 || $0 == 503 }) else {
            return "concurrent refresh within the leeway: expected 200s and 503s, at least one 200, got \(statuses)"
        }
        // A request is told to retry only once it was superseded more often than the engine retries, each
        // time by a rotation that committed — another request's success — since its last look.
        guard successes.count == responses.count || successes.count >= AuthEngine.rotationsBeforeContention else {
            return "concurrent refresh within the leeway: a 503 with only \(successes.count) rotations to supersede it"
        }
        for contended in responses where contended.status == 503 {
            if let mismatch = contended.mismatch(with: .refused(503, "temporarily_unavailable")) {
                return "concurrent refresh within the leeway: \(mismatch)"
            }
        }
        for success in successes {
            if let mismatch = success.mismatch(with: .success(authenticated: plan.startsSession)) {
                return "concurrent refresh within the leeway: \(mismatch)"
            }
        }
        let presented = model.refreshTokens[plan.presented].value
        guard let presentedDigest = OpaqueToken(presented: presented, as: .refreshToken)?.digest,
            let presentedRecord = try? await world.records.refreshToken(presentedDigest)
        else { return Self.unreadable }
        let grant = presentedRecord.grant
        guard
            let last = successes.firstIndex(where: {
                Self.digest($0.refreshToken, .refreshToken) == grant.currentRefreshToken
            })
        else { return "concurrent refresh within the leeway: the grant's current token is none of the answers'" }
        var sessions = successes.map(\.sessionID)
        if plan.startsSession {
            guard let live = sessions.firstIndex(where: { Self.digest($0, .studioSession) == grant.session }) else {
                return "concurrent refresh within the leeway: the grant's session is none of the answers'"
            }
            sessions.append(sessions.remove(at: live))
        }
        // The lineage as one-after-another retries leave it: the presented token names the current one,
        // and every other success's token was retired by the retry after it. Checked on the records,
        // since an answer may not show it until such a token is presented again.
        guard case .rotated(_, let successor) = presentedRecord.token.state, successor == grant.currentRefreshToken
        else { return "concurrent refresh within the leeway: the presented token does not name the current one" }
        for (position, success) in successes.enumerated() where position != last {
            guard let replaced = Self.digest(success.refreshToken, .refreshToken),
                case .retired = try? await world.records.refreshToken(replaced)?.token.state
            else { return "concurrent refresh within the leeway: a replaced successor is not retired" }
        }
        // What the burst added is the successes' and nothing more: a 503 wrote nothing, and no two
        // successes share a secret.
        guard let after = await snapshot() else { return Self.unreadable }
        func added<Value>(_ records: KeyPath<InMemoryGrantStore.Snapshot, [SecretDigest: Value]>) -> Set<SecretDigest> {
            Self.added(records, from: before, to: after)
        }
        let issuedRefresh = Set(successes.compactMap { Self.digest($0.refreshToken, .refreshToken) })
        let issuedAccess = Set(successes.compactMap { Self.digest($0.accessToken, .accessToken) })
        guard issuedRefresh.count == successes.count, issuedAccess.count == successes.count,
            added(\.refreshTokens) == issuedRefresh, added(\.accessTokens) == issuedAccess,
            added(\.sessions) == Set(plan.startsSession ? [grant.session].compactMap { $0 } : [])
        else { return "concurrent refresh within the leeway: the store holds other credentials than the answers'" }
        // The leeway runs from the first rotation: a retry keeps its time.
        let firstRotation: Date? =
            if plan.presented == plan.current {
                world.clock.now()
            } else if case .rotated(let rotatedAt, _) = before.refreshTokens[presentedDigest]?.state {
                rotatedAt
            } else { nil }
        guard case .rotated(let rotatedAt, _) = presentedRecord.token.state, rotatedAt == firstRotation else {
            return "concurrent refresh within the leeway: the presented token's rotation time moved"
        }
        statistics.concurrentRetriesWithinLeeway += successes.count - 1
        statistics.rotationsSupersededInBursts += rotationAttempts - successes.count
        var rotations = successes
        rotations.append(rotations.remove(at: last))
        let grantIndex = model.refreshTokens[plan.presented].grant
        for (position, (success, session)) in zip(rotations, sessions).enumerated() {
            guard let access = success.accessToken, let refresh = success.refreshToken else {
                return "concurrent refresh within the leeway: a success without a credential"
            }
            var step = plan
            if position > 0, let current = model.grants[grantIndex].currentRefreshToken {
                step.current = current
            }
            model.rotate(
                step,
                studioSession: studioSession,
                accessToken: access,
                refreshToken: refresh,
                session: session
            )
            secrets += [access, refresh] + (session.map { [$0] } ?? [])
        }
        return nil
    }

    /// The digest of a secret an answer carried, as the store keys it.
    private static func digest(_ value: String?, _ kind: SecretKind) -> SecretDigest? {
        value.flatMap { OpaqueToken(presented: $0, as: kind)?.digest }
    }

    /// The keys of `records` that `after` holds and `before` did not.
    private static func added<Value>(
        _ records: KeyPath<InMemoryGrantStore.Snapshot, [SecretDigest: Value]>,
        from before: InMemoryGrantStore.Snapshot,
        to after: InMemoryGrantStore.Snapshot
    ) -> Set<SecretDigest> {
        Set(after[keyPath: records].keys).subtracting(before[keyPath: records].keys)
    }

    // MARK: Invariants

    static let unreadable = "the store's records could not be read"

    /// Every record as it stands, or `nil` when the store cannot be read.
    private func snapshot() async -> InMemoryGrantStore.Snapshot? {
        try? await world.snapshot()
    }

    /// A refused request must leave the store as it was — but for the one revocation a replay or reuse
    /// demands, which `revoked` names.
    private func refusalChangedNothing(_ before: InMemoryGrantStore.Snapshot, revoked: GrantID?) async -> String? {
        guard var after = await snapshot() else { return Self.unreadable }
        if let revoked, let grant = after.grants[revoked], before.grants[revoked]?.revocation == nil,
            let reason = grant.revocation?.reason, reason == .codeReplayed || reason == .refreshTokenReused
        {
            after.grants[revoked]?.revocation = nil
        }
        return after == before ? nil : "a refused request changed the store"
    }

    /// The invariants that must hold between any two operations.
    mutating func checkInvariants() async -> String? {
        statistics.authenticationChecks += model.sessions.count + model.accessTokens.count
        statistics.revocations = model.grants.filter(\.revoked).count
        for (index, session) in model.sessions.enumerated() {
            let expected = model.sessionAuthenticates(index)
            let actual =
                if case .authenticated = try? await world.engine(instance).authenticateSession(
                    cookieValue: session.value
                ) {
                    true
                } else { false }
            if actual != expected { return "session \(index) authenticates: expected \(expected), got \(actual)" }
        }
        for (index, token) in model.accessTokens.enumerated() {
            let expected = model.accessTokenAuthenticates(index)
            let actual =
                if case .authenticated = try? await world.engine(instance).authenticateAccessToken(token.value) {
                    true
                } else {
                    false
                }
            if actual != expected { return "access token \(index) authenticates: expected \(expected), got \(actual)" }
        }
        guard let snapshot = await snapshot() else { return Self.unreadable }
        let now = world.clock.now()
        var liveSessions: [GrantID: Int] = [:]
        for session in snapshot.sessions.values where now < session.expiresAt {
            liveSessions[session.grant, default: 0] += 1
        }
        if let crowded = liveSessions.first(where: { $0.value > 1 }) {
            return "grant \(crowded.key) has \(crowded.value) live sessions"
        }
        for grant in model.grants {
            if let stored = snapshot.grants[grant.engineID], (stored.revocation != nil) != grant.revoked {
                return "grant \(grant.engineID) revoked: model \(grant.revoked), store \(stored.revocation != nil)"
            }
        }
        return nil
    }

    /// The store's records must not contain any secret or verifier seen during the run.
    func checkNoRawSecrets() async -> String? {
        guard let snapshot = await snapshot() else { return Self.unreadable }
        var stored = ""
        dump(snapshot, to: &stored)
        for secret in secrets {
            let distinctive = secret.count == 47 ? String(secret.dropFirst(4)) : secret
            if stored.contains(distinctive) { return "the store holds a raw secret (\(secret.prefix(8))…)" }
        }
        return nil
    }
}
