// SPDX-License-Identifier: Apache-2.0

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
    func exchange(_ request: EndpointRequest) async -> ExchangeOutcome {
        var machine = ExchangeStateMachine(request: request, settings: settings, now: timeSource.now())
        let now = machine.now
        var action = machine.start()
        while true {
            // Consumed, so that each case takes its payload over instead of copying it — an account's
            // string, a rotation's object — while the action it came from waits to be replaced; every case
            // sets the next action or returns.
            switch consume action {
            case .admit(let key):
                do {
                    let decision = try await admit(key, at: now)
                    if case .limited(let seconds) = decision {
                        report(.rateLimited(key: key, retryAfterSeconds: seconds))
                    }
                    action = machine.admitted(decision)
                } catch {
                    action = failed(.admitAttempt, error, &machine)
                }

            case .loadCode(let digest):
                do {
                    action = machine.codeLoaded(try await authorizationCode(digest))
                } catch {
                    action = failed(.loadCode, error, &machine)
                }

            case .loadRefreshToken(let digest):
                do {
                    action = machine.refreshTokenLoaded(try await refreshToken(digest))
                } catch {
                    action = failed(.loadRefreshToken, error, &machine)
                }

            case .checkAccount(let account):
                do {
                    action = machine.accountChecked(try await status(of: account))
                } catch {
                    action = failed(.accountStatus, error, &machine)
                }

            case .redeemCode(let redemption):
                do {
                    // The issuance is read where the redemption holds it: a local copy would retain each of
                    // its strings and release them again.
                    let outcome = try await redeemCode(redemption, at: now)
                    if case .redeemed = outcome {
                        report(
                            .grantCreated(
                                grant: redemption.issuance.grant.id,
                                client: redemption.issuance.grant.client,
                                account: redemption.issuance.grant.account
                            )
                        )
                        report(.sessionStarted(grant: redemption.issuance.grant.id))
                    }
                    action = machine.codeRedeemed(outcome)
                } catch {
                    action = failed(.redeemCode, error, &machine)
                }

            case .rotateRefreshToken(let rotation):
                do {
                    let outcome = try await rotate(rotation, at: now)
                    if case .rotated = outcome {
                        report(.refreshTokenRotated(grant: rotation.successor.grant))
                    }
                    action = machine.refreshTokenRotated(outcome)
                } catch {
                    action = failed(.rotateRefreshToken, error, &machine)
                }

            case .rotateRefreshTokenStartingSession(let rotation):
                guard let session = rotation.startingSession else {
                    preconditionFailure("a rotation starting a session without one")
                }
                do {
                    let outcome = try await rotate(rotation, startingSession: session, at: now)
                    if case .rotated = outcome {
                        report(.refreshTokenRotated(grant: rotation.successor.grant))
                        report(.sessionStarted(grant: session.grant))
                    }
                    action = machine.refreshTokenRotatedStartingSession(outcome)
                } catch {
                    action = failed(.rotateRefreshTokenStartingSession, error, &machine)
                }

            case .replaceSession(let session):
                do {
                    let outcome = try await replaceSession(with: session, at: now)
                    if case .replaced = outcome {
                        report(.sessionStarted(grant: session.grant))
                    } else {
                        report(.sessionStartFailed(grant: session.grant))
                    }
                    action = machine.sessionReplaced(outcome)
                } catch {
                    report(.sessionStartFailed(grant: session.grant))
                    action = failed(.replaceSession, error, &machine)
                }

            case .revokeGrant(let grant, let reason):
                if reason == .codeReplayed {
                    report(.codeReplayDetected(grant: grant, peerAddress: request.peerAddress))
                } else if reason == .refreshTokenReused {
                    report(.refreshTokenReuseDetected(grant: grant, peerAddress: request.peerAddress))
                }
                do {
                    let outcome = try await revokeGrant(grant, reason: reason, at: now)
                    if case .revoked = outcome {
                        report(.grantRevoked(grant: grant, reason: reason))
                    }
                    action = machine.grantRevoked(outcome)
                } catch {
                    action = failed(.revokeGrant, error, &machine)
                }

            case .respond(let outcome):
                if case .refused(let error) = outcome {
                    report(.requestRefused(error, peerAddress: request.peerAddress))
                }
                return outcome
            }
        }
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
}
