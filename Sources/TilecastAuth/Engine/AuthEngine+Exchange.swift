// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AuthEngine {
    /// Answers one request to `POST /api/v1/oauth/ios-session`.
    ///
    /// This is the whole endpoint: rate limiting, validation, the `authorization_code` and
    /// `refresh_token` grants, the Studio session and its cookie, and every error response. It never
    /// throws and never traps on any input. A backend failure becomes a 503 JSON error with nothing
    /// half-done; every other refusal is a 4xx JSON error that leaves the store exactly as it was — but
    /// for the grant revocation a replayed code or a reused refresh token demands.
    public func handle(request: EndpointRequest) async -> EndpointResponse {
        EndpointResponse(await exchange(request))
    }

    /// Drives an ``ExchangeStateMachine`` to its answer: performs each action against the backends, feeds
    /// the result back, and reports what happened to the observer. The machine's actions carry everything
    /// the call needs — the records to store, with the secrets it minted — so the driver decides nothing.
    ///
    /// An action goes to the in-memory component where the engine has it, in place
    /// (``performInPlace(_:on:peerAddress:)``), and through the component's protocol otherwise, one
    /// `await` each (``performSuspending(_:on:peerAddress:)``). Only this loop and the second are `async`:
    /// an `async` function keeps its locals in a frame the task allocates, and the loop that held every
    /// action's case had a frame of 33,264 bytes, allocated and written across on every request.
    func exchange(_ request: EndpointRequest) async -> ExchangeOutcome {
        var machine = ExchangeStateMachine(request: request, settings: settings, now: timeSource.now())
        var action = machine.start()
        while true {
            action = performInPlace(action, on: &machine, peerAddress: request.peerAddress)
            if case .respond(let outcome) = action {
                if case .refused(let error) = outcome {
                    report(.requestRefused(error, peerAddress: request.peerAddress))
                }
                return outcome
            }
            action = await performSuspending(action, on: &machine, peerAddress: request.peerAddress)
        }
    }

    /// Performs actions on the in-memory components, feeding each result back, until the machine answers
    /// or asks for a component the engine has only through its protocol; returns that action.
    ///
    /// Each case takes its payload over — `action` is consumed — and sets the next action or returns.
    private func performInPlace(
        _ action: consuming ExchangeStateMachine.Action,
        on machine: inout ExchangeStateMachine,
        peerAddress: String?
    ) -> ExchangeStateMachine.Action {
        let now = machine.now
        while true {
            switch consume action {
            case .admit(let key):
                guard let limiter = inMemoryRateLimiter else { return .admit(key) }
                action = admitted(limiter.admitNow(key, at: now), key: key, &machine)

            case .loadCode(let digest):
                guard let memory = inMemoryStore else { return .loadCode(digest) }
                action = machine.codeLoaded(memory.authorizationCodeNow(digest))

            case .loadRefreshToken(let digest):
                guard let memory = inMemoryStore else { return .loadRefreshToken(digest) }
                action = machine.refreshTokenLoaded(memory.refreshTokenNow(digest))

            case .checkAccount(let account):
                guard let directory = inMemoryAccounts else { return .checkAccount(account) }
                action = machine.accountChecked(directory.statusNow(of: account))

            case .redeemCode(let redemption):
                guard let memory = inMemoryStore else { return .redeemCode(redemption) }
                do {
                    let outcome = try memory.redeemCodeNow(redemption.code, issuing: redemption.issuance, at: now)
                    action = redeemed(outcome, redemption, &machine)
                } catch {
                    action = failed(.redeemCode, error, &machine)
                }

            case .rotateRefreshToken(let rotation):
                guard let memory = inMemoryStore else { return .rotateRefreshToken(rotation) }
                do {
                    let outcome = try memory.rotateRefreshTokenNow(rotation, startingSession: nil, at: now)
                    action = rotated(outcome, rotation, &machine)
                } catch {
                    action = failed(.rotateRefreshToken, error, &machine)
                }

            case .rotateRefreshTokenStartingSession(let rotation):
                guard let memory = inMemoryStore else { return .rotateRefreshTokenStartingSession(rotation) }
                let session = Self.startingSession(of: rotation)
                do {
                    let outcome = try memory.rotateRefreshTokenNow(rotation, startingSession: session, at: now)
                    action = rotatedStartingSession(outcome, rotation, session, &machine)
                } catch {
                    action = failed(.rotateRefreshTokenStartingSession, error, &machine)
                }

            case .replaceSession(let session):
                guard let memory = inMemoryStore else { return .replaceSession(session) }
                do {
                    let outcome = try memory.replaceSessionNow(of: session.grant, with: session, at: now)
                    action = replaced(outcome, session, &machine)
                } catch {
                    action = failedToReplace(session, error, &machine)
                }

            case .revokeGrant(let grant, let reason):
                guard let memory = inMemoryStore else { return .revokeGrant(grant, reason) }
                reportRevoking(grant, because: reason, peerAddress: peerAddress)
                action = revoked(memory.revokeGrantNow(grant, reason: reason, at: now), grant, reason, &machine)

            case .respond(let outcome):
                return .respond(outcome)
            }
        }
    }

    /// Performs one action through its component's protocol and feeds the result back; returns the
    /// machine's next action. Never given `.respond`, which ``exchange(_:)`` answers itself.
    @inline(never)
    private func performSuspending(
        _ action: consuming ExchangeStateMachine.Action,
        on machine: inout ExchangeStateMachine,
        peerAddress: String?
    ) async -> ExchangeStateMachine.Action {
        let now = machine.now
        switch consume action {
        case .admit(let key):
            do {
                return admitted(try await rateLimiter.admit(key, at: now), key: key, &machine)
            } catch {
                return failed(.admitAttempt, error, &machine)
            }

        case .loadCode(let digest):
            if let remembered = store.rememberedAuthorizationCode(digest) {
                return await goingForward(
                    on: &machine,
                    remembered: remembered,
                    load: { machine, code, _ in machine.codeLoaded(code) },
                    read: { try await store.authorizationCode(digest) },
                    failingAs: .loadCode,
                    writtenBy: { code, write in write.grant != nil && code?.redemption?.grant == write.grant }
                )
            }
            do {
                return machine.codeLoaded(try await store.authorizationCode(digest))
            } catch {
                return failed(.loadCode, error, &machine)
            }

        case .loadRefreshToken(let digest):
            if let remembered = store.rememberedRefreshToken(digest) {
                return await goingForward(
                    on: &machine,
                    remembered: remembered,
                    load: { machine, lookup, isRemembered in
                        machine.refreshTokenLoaded(lookup, remembered: isRemembered)
                    },
                    read: { try await store.refreshToken(digest) },
                    failingAs: .loadRefreshToken,
                    writtenBy: { lookup, write in
                        guard let successor = write.successor else { return false }
                        if case .rotated(_, let next)? = lookup?.token.state, next == successor { return true }
                        // A retry — planned by any instance, whatever this one's leeway — may since have
                        // moved the token's successor on, and the token may have expired and been pruned:
                        // the successor's own record says.
                        return try await store.refreshToken(successor) != nil
                    }
                )
            }
            do {
                return machine.refreshTokenLoaded(try await store.refreshToken(digest))
            } catch {
                return failed(.loadRefreshToken, error, &machine)
            }

        case .checkAccount(let account):
            do {
                return machine.accountChecked(try await accounts.status(of: account))
            } catch {
                return failed(.accountStatus, error, &machine)
            }

        case .redeemCode(let redemption):
            do {
                // The issuance is read where the redemption holds it: a local copy would retain each of
                // its strings and release them again.
                let outcome = try await store.redeemCode(redemption.code, issuing: redemption.issuance, at: now)
                return redeemed(outcome, redemption, &machine)
            } catch {
                return failed(.redeemCode, error, &machine)
            }

        case .rotateRefreshToken(let rotation):
            do {
                return rotated(try await rotate(rotation, at: now), rotation, &machine)
            } catch {
                return failed(.rotateRefreshToken, error, &machine)
            }

        case .rotateRefreshTokenStartingSession(let rotation):
            let session = Self.startingSession(of: rotation)
            do {
                let outcome = try await rotate(rotation, startingSession: session, at: now)
                return rotatedStartingSession(outcome, rotation, session, &machine)
            } catch {
                return failed(.rotateRefreshTokenStartingSession, error, &machine)
            }

        case .replaceSession(let session):
            do {
                return replaced(
                    try await store.replaceSession(of: session.grant, with: session, at: now),
                    session,
                    &machine
                )
            } catch {
                return failedToReplace(session, error, &machine)
            }

        case .revokeGrant(let grant, let reason):
            reportRevoking(grant, because: reason, peerAddress: peerAddress)
            do {
                return revoked(try await store.revokeGrant(grant, reason: reason, at: now), grant, reason, &machine)
            } catch {
                return failed(.revokeGrant, error, &machine)
            }

        case .respond(let outcome):
            return .respond(outcome)
        }
    }
}

// MARK: Remembered records

extension AuthEngine {
    /// Runs the machine's steps on a record the store remembered of its own writes
    /// (``GrantStore/rememberedAuthorizationCode(_:)``, ``GrantStore/rememberedRefreshToken(_:)``) — the
    /// record's checks, the account's, then the atomic write they lead to — on a copy of the machine, and
    /// keeps them when the write answers: the redemption or the rotation checks again, under its locks,
    /// everything another instance may have changed since (redeemed, rotated, revoked), and each of its
    /// answers is one a read would have led to (a rotation's `.superseded` comes with the token as it
    /// stands, which the machine evaluates as read).
    ///
    /// Every other step is dropped with the copy, and the record read from the store (`read`; a failure
    /// of the read is reported as `operation`), so that every answer but a write's is decided on the
    /// record as it stands, and the instance that wrote a record answers as any other would, one round
    /// trip sooner:
    ///
    /// - a refusal, the revocation a replay or a reuse demands, an inactive account, a directory that
    ///   failed: the read decides, and when it needs the same account's status it gets the answer, or
    ///   the failure, the copy got — the directory is asked once;
    /// - a redemption that found no code — deleted by an account's revocation, or pruned by an instance
    ///   whose clock is ahead — which a read answers as an unknown code, not as the expired one the
    ///   machine makes of `.notFound`; a read that finds the code as remembered leaves the redemption's
    ///   answer standing, without a second attempt;
    /// - a write that threw an error saying the backend was unavailable (``BackendAvailabilityError``):
    ///   nothing was sent, and a reader whose read began at that moment would have waited for the same
    ///   backend and failed the same way, so the answer is the write's failure at once, without the
    ///   read — which would only wait for that backend a second time. The event names the write, where
    ///   such a reader's names its read; the answer is the same 503.
    /// - a write that threw otherwise: when the record as it stands is still what the copy went forward on, or the
    ///   write is found to have committed before its answer was lost (the code redeemed into the grant
    ///   it created; the token rotated to the successor it stored, or else that successor's own record,
    ///   since a retry planned by any instance may have moved the token's successor on, and the token
    ///   may have been pruned at its expiry), the answer is the write's failure, as on a read's path,
    ///   with no second attempt; otherwise — another instance redeemed or
    ///   rotated it meanwhile — the read decides, and a replay or a reuse is revoked and reported as
    ///   anywhere. When the read fails, or the successor's read that tells whether a rotation committed,
    ///   the answer is the read's failure, as from a reader whose read failed — the status a reader
    ///   gives either way; if the write had committed before its answer was lost, the event names the
    ///   read where a reader would name the write.
    ///
    /// One history still ends otherwise than at a reader: a rotation that commits, loses its answer, and
    /// whose grant an instance with its clock ahead prunes — token, successor and all — before the read,
    /// is refused as an unknown token where a reader answers 503. It takes a grant in its last seconds
    /// (a successor expires with its grant); the grant is over either way.
    ///
    /// Nothing is reported on a dropped path. A redemption that found no code had minted its grant's
    /// secrets; they were stored nowhere and are answered to no one.
    private func goingForward<Record>(
        on machine: inout ExchangeStateMachine,
        remembered: Record,
        load: (inout ExchangeStateMachine, Record?, _ isRemembered: Bool) -> ExchangeStateMachine.Action,
        read: () async throws -> Record?,
        failingAs operation: BackendOperation,
        writtenBy isWrittenBy: (Record?, AttemptedWrite) async throws -> Bool
    ) async -> ExchangeStateMachine.Action {
        var trial = machine
        var asked: (account: AccountID, status: Result<AccountStatus, any Error>)?
        var unanswered: UnansweredWrite?
        if case .checkAccount(let account) = load(&trial, remembered, true) {
            let status = await statusResult(of: account)
            asked = (account, status)
            if case .success(let active) = status {
                switch await attempt(trial.accountChecked(active), on: &trial) {
                case .answered(let next):
                    machine = trial
                    return next
                case .threw(let operation, let error, _) where Self.backendWasUnavailable(error):
                    // Nothing was sent, and a read would have waited for the same backend and failed the
                    // same way: answered as a reader whose read found the backend unavailable.
                    machine = trial
                    return failed(operation, error, &machine)
                case .threw(let operation, let error, let write):
                    unanswered = .threw(operation, error, write)
                case .foundNothing(let redemption):
                    unanswered = .foundNothing(redemption)
                case .notAWrite:
                    break
                }
            }
        }
        let record: Record?
        do {
            record = try await read()
        } catch {
            // As a read that fails answers, whatever the copy's write did: a reader that fails here never
            // got as far as a write.
            return failed(operation, error, &machine)
        }
        var fresh = machine
        let next = load(&fresh, record, false)
        let stillAsRemembered = if case .checkAccount = next { true } else { false }
        switch unanswered {
        case .threw(let writeOperation, let writeError, let write):
            // Whether the write committed is asked only when the record changed; a read that cannot tell
            // is answered as a read that failed.
            var written = stillAsRemembered
            if !written {
                do {
                    written = try await isWrittenBy(record, write)
                } catch {
                    return failed(operation, error, &machine)
                }
            }
            if written {
                machine = trial
                return failed(writeOperation, writeError, &machine)
            }
        case .foundNothing(let redemption):
            // Read again, the code still leads to the redemption that found nothing: its answer stands,
            // without a second attempt.
            if stillAsRemembered {
                machine = trial
                return redeemed(.notFound, redemption, &machine)
            }
        case nil:
            break
        }
        machine = fresh
        guard case .checkAccount(let account) = next, let asked, asked.account == account else { return next }
        switch asked.status {
        case .success(let status): return machine.accountChecked(status)
        case .failure(let error): return failed(.accountStatus, error, &machine)
        }
    }

    /// What a write a remembered record led to would leave in the store: the grant a redemption creates,
    /// the successor a rotation stores.
    private struct AttemptedWrite {
        var grant: GrantID?
        var successor: SecretDigest?
    }

    /// A write on a remembered record whose answer waits for the record to be read.
    private enum UnansweredWrite {
        case threw(BackendOperation, any Error, AttemptedWrite)
        case foundNothing(PlannedRedemption)
    }

    /// How a write attempted on a remembered record ended.
    private enum WriteAttempt {
        /// The write answered; the machine's next action.
        case answered(ExchangeStateMachine.Action)
        /// The redemption found no code.
        case foundNothing(PlannedRedemption)
        /// The write threw.
        case threw(BackendOperation, any Error, AttemptedWrite)
        /// The copy's step was not a write.
        case notAWrite
    }

    /// Performs `action` on the copy `trial` when it is a redemption or a rotation, feeding the answer
    /// back, as ``performSuspending(_:on:peerAddress:)`` would — the rotation starting a session followed
    /// by the plain rotation when the store starts sessions separately.
    private func attempt(
        _ action: ExchangeStateMachine.Action,
        on trial: inout ExchangeStateMachine
    ) async -> WriteAttempt {
        let now = trial.now
        switch action {
        case .redeemCode(let redemption):
            do {
                let outcome = try await store.redeemCode(redemption.code, issuing: redemption.issuance, at: now)
                if case .notFound = outcome { return .foundNothing(redemption) }
                return .answered(redeemed(outcome, redemption, &trial))
            } catch {
                return .threw(.redeemCode, error, AttemptedWrite(grant: redemption.issuance.grant.id))
            }
        case .rotateRefreshToken(let rotation):
            do {
                return .answered(rotated(try await rotate(rotation, at: now), rotation, &trial))
            } catch {
                return .threw(.rotateRefreshToken, error, AttemptedWrite(successor: rotation.successor.digest))
            }
        case .rotateRefreshTokenStartingSession(let rotation):
            let session = Self.startingSession(of: rotation)
            let outcome: RefreshRotation?
            do {
                outcome = try await rotate(rotation, startingSession: session, at: now)
            } catch {
                let write = AttemptedWrite(successor: rotation.successor.digest)
                return .threw(.rotateRefreshTokenStartingSession, error, write)
            }
            let next = rotatedStartingSession(outcome, rotation, session, &trial)
            guard outcome == nil, case .rotateRefreshToken = next else { return .answered(next) }
            return await attempt(next, on: &trial)
        default:
            return .notAWrite
        }
    }

    /// The store's rotation of `rotation`'s presented token.
    private func rotate(_ rotation: PlannedRotation, at now: Date) async throws -> RefreshRotation {
        try await store.rotateRefreshToken(
            rotation.presented,
            replacing: rotation.current,
            successor: rotation.successor,
            accessToken: rotation.accessToken,
            at: now
        )
    }

    /// The store's rotation of `rotation`'s presented token that starts `session` with it, or `nil`.
    private func rotate(
        _ rotation: PlannedRotation,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        try await store.rotateRefreshToken(
            rotation.presented,
            replacing: rotation.current,
            successor: rotation.successor,
            accessToken: rotation.accessToken,
            startingSession: session,
            at: now
        )
    }

    /// Whether `error` says its operation never reached the backend, which could take no operation then.
    private static func backendWasUnavailable(_ error: any Error) -> Bool {
        (error as? any BackendAvailabilityError)?.backendWasUnavailable == true
    }

    /// The account directory's answer, or its failure.
    private func statusResult(of account: AccountID) async -> Result<AccountStatus, any Error> {
        if let directory = inMemoryAccounts { return .success(directory.statusNow(of: account)) }
        do {
            return .success(try await accounts.status(of: account))
        } catch {
            return .failure(error)
        }
    }
}

// MARK: Results

/// What the driver does with each action's result, wherever the action was performed: report it to the
/// observer and feed it to the machine.
extension AuthEngine {
    private func admitted(
        _ decision: RateLimitDecision,
        key: RateLimitKey,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        if case .limited(let seconds) = decision {
            report(.rateLimited(key: key, retryAfterSeconds: seconds))
        }
        return machine.admitted(decision)
    }

    private func redeemed(
        _ outcome: CodeRedemption,
        _ redemption: PlannedRedemption,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        if case .redeemed = outcome {
            let grant = redemption.issuance.grant
            report(.grantCreated(grant: grant.id, client: grant.client, account: grant.account))
            report(.sessionStarted(grant: grant.id))
        }
        return machine.codeRedeemed(outcome)
    }

    private func rotated(
        _ outcome: RefreshRotation,
        _ rotation: PlannedRotation,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        if case .rotated = outcome {
            report(.refreshTokenRotated(grant: rotation.successor.grant))
        }
        return machine.refreshTokenRotated(outcome)
    }

    private func rotatedStartingSession(
        _ outcome: RefreshRotation?,
        _ rotation: PlannedRotation,
        _ session: StudioSession,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        if case .rotated = outcome {
            report(.refreshTokenRotated(grant: rotation.successor.grant))
            report(.sessionStarted(grant: session.grant))
        }
        return machine.refreshTokenRotatedStartingSession(outcome)
    }

    private func replaced(
        _ outcome: SessionReplacement,
        _ session: StudioSession,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        if case .replaced = outcome {
            report(.sessionStarted(grant: session.grant))
        } else {
            report(.sessionStartFailed(grant: session.grant))
        }
        return machine.sessionReplaced(outcome)
    }

    private func failedToReplace(
        _ session: StudioSession,
        _ error: any Error,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        report(.sessionStartFailed(grant: session.grant))
        return failed(.replaceSession, error, &machine)
    }

    /// Reports the replay or reuse that demands a grant's revocation, before it is asked for.
    private func reportRevoking(_ grant: GrantID, because reason: RevocationReason, peerAddress: String?) {
        if reason == .codeReplayed {
            report(.codeReplayDetected(grant: grant, peerAddress: peerAddress))
        } else if reason == .refreshTokenReused {
            report(.refreshTokenReuseDetected(grant: grant, peerAddress: peerAddress))
        }
    }

    private func revoked(
        _ outcome: GrantRevocation,
        _ grant: GrantID,
        _ reason: RevocationReason,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        if case .revoked = outcome {
            report(.grantRevoked(grant: grant, reason: reason))
        }
        return machine.grantRevoked(outcome)
    }

    /// Reports a backend failure and lets the machine decide the answer.
    private func failed(
        _ operation: BackendOperation,
        _ error: any Error,
        _ machine: inout ExchangeStateMachine
    ) -> ExchangeStateMachine.Action {
        report(.backendFailed(operation: operation, error: error))
        return machine.backendFailed(operation)
    }

    /// The session a rotation asked to start with it: the machine plans one for that action only.
    private static func startingSession(of rotation: PlannedRotation) -> StudioSession {
        guard let session = rotation.startingSession else {
            preconditionFailure("a rotation starting a session without one")
        }
        return session
    }
}
