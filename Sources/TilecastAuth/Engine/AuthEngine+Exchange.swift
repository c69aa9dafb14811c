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

    /// Drives an ``ExchangeStateMachine`` to its answer: performs each action against the backends and
    /// feeds the result back.
    func exchange(_ request: EndpointRequest) async -> ExchangeOutcome {
        var machine = ExchangeStateMachine(request: request, configuration: configuration, now: timeSource.now())
        let now = machine.now
        var action = machine.start()
        while true {
            switch action {
            case .admit(let key):
                do {
                    let decision = try await rateLimiter.admit(key, at: now)
                    if case .limited(let seconds) = decision {
                        observer.observe(.rateLimited(key: key, retryAfterSeconds: seconds))
                    }
                    action = machine.admitted(decision)
                } catch {
                    action = failed(.admitAttempt, error, &machine)
                }

            case .loadCode(let digest):
                do {
                    action = machine.codeLoaded(try await store.authorizationCode(digest))
                } catch {
                    action = failed(.loadCode, error, &machine)
                }

            case .loadRefreshToken(let digest):
                do {
                    action = machine.refreshTokenLoaded(try await store.refreshToken(digest))
                } catch {
                    action = failed(.loadRefreshToken, error, &machine)
                }

            case .checkAccount(let account):
                do {
                    action = machine.accountChecked(try await accounts.status(of: account))
                } catch {
                    action = failed(.accountStatus, error, &machine)
                }

            case .redeemCode(let code, let plan):
                let minted = mintGrant(nativeCredential: plan.issuesNativeCredential)
                let issuance = plan.issuance(minted)
                do {
                    let outcome = try await store.redeemCode(code, issuing: issuance, at: now)
                    if outcome == .redeemed {
                        observer.observe(.grantCreated(grant: minted.grant, client: plan.client, account: plan.account))
                        observer.observe(.sessionStarted(grant: minted.grant))
                    }
                    action = machine.codeRedeemed(outcome, minted: minted)
                } catch {
                    action = failed(.redeemCode, error, &machine)
                }

            case .rotateRefreshToken(let plan):
                let minted = MintedRotation(
                    accessToken: .mint(.accessToken, using: randomSource),
                    refreshToken: .mint(.refreshToken, using: randomSource)
                )
                do {
                    let outcome = try await store.rotateRefreshToken(
                        plan.presented,
                        replacing: plan.current,
                        successor: plan.successor(minted),
                        accessToken: plan.accessToken(minted),
                        at: now
                    )
                    if outcome == .rotated {
                        observer.observe(.refreshTokenRotated(grant: plan.grant))
                    }
                    action = machine.refreshTokenRotated(outcome, minted: minted)
                } catch {
                    action = failed(.rotateRefreshToken, error, &machine)
                }

            case .replaceSession(let plan):
                let session = OpaqueToken.mint(.studioSession, using: randomSource)
                do {
                    let outcome = try await store.replaceSession(of: plan.grant, with: plan.session(session), at: now)
                    if case .replaced = outcome {
                        observer.observe(.sessionStarted(grant: plan.grant))
                    } else {
                        observer.observe(.sessionStartFailed(grant: plan.grant))
                    }
                    action = machine.sessionReplaced(outcome, session: session)
                } catch {
                    observer.observe(.sessionStartFailed(grant: plan.grant))
                    action = failed(.replaceSession, error, &machine)
                }

            case .revokeGrant(let grant, let reason):
                switch reason {
                case .codeReplayed:
                    observer.observe(.codeReplayDetected(grant: grant, peerAddress: request.peerAddress))
                case .refreshTokenReused:
                    observer.observe(.refreshTokenReuseDetected(grant: grant, peerAddress: request.peerAddress))
                case .signedOut, .revokedByServer: break
                }
                do {
                    let outcome = try await store.revokeGrant(grant, reason: reason, at: now)
                    if case .revoked = outcome {
                        observer.observe(.grantRevoked(grant: grant, reason: reason))
                    }
                    action = machine.grantRevoked(outcome)
                } catch {
                    action = failed(.revokeGrant, error, &machine)
                }

            case .respond(let outcome):
                if case .refused(let error) = outcome {
                    observer.observe(.requestRefused(error, peerAddress: request.peerAddress))
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
        observer.observe(.backendFailed(operation: operation, error: error))
        return machine.backendFailed(operation)
    }

    /// Mints a new grant's id and secrets: one random-source read each.
    func mintGrant(nativeCredential: Bool) -> MintedGrant {
        MintedGrant(
            grant: GrantID(randomSource: randomSource),
            accessToken: nativeCredential ? .mint(.accessToken, using: randomSource) : nil,
            refreshToken: nativeCredential ? .mint(.refreshToken, using: randomSource) : nil,
            session: .mint(.studioSession, using: randomSource)
        )
    }
}
