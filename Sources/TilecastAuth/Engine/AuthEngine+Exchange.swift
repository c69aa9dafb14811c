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
    func exchange(_ request: EndpointRequest) async -> ExchangeOutcome {
        var machine = ExchangeStateMachine(
            request: request,
            configuration: configuration,
            now: timeSource.now(),
            randomSource: randomSource,
            readsAhead: store.overlapsLookupsWithAdmission
        )
        let now = machine.now
        // The result of a lookup run beside the admission, for the load action that names it.
        var lookedAhead: (lookahead: ExchangeStateMachine.Lookahead, result: Result<LookedUp, any Error>)?
        var action = machine.start()
        while true {
            switch action {
            case .admit(let key, let lookahead):
                let decision: Result<RateLimitDecision, any Error>
                if let lookahead {
                    async let early = Self.lookUp(lookahead, in: store)
                    decision = await Self.admit(key, at: now, by: rateLimiter)
                    lookedAhead = (lookahead, await early)
                } else {
                    decision = await Self.admit(key, at: now, by: rateLimiter)
                }
                switch decision {
                case .success(let decision):
                    if case .limited(let seconds) = decision {
                        observer.observe(.rateLimited(key: key, retryAfterSeconds: seconds))
                    }
                    action = machine.admitted(decision)
                case .failure(let error):
                    action = failed(.admitAttempt, error, &machine)
                }

            case .loadCode(let digest):
                let result: Result<LookedUp, any Error>
                if let ahead = lookedAhead, ahead.lookahead == .code(digest) {
                    result = ahead.result
                    lookedAhead = nil
                } else {
                    result = await Self.lookUp(.code(digest), in: store)
                }
                switch result {
                case .success(.code(let code)): action = machine.codeLoaded(code)
                case .success(.refreshToken): preconditionFailure("a code lookup answered with a refresh token")
                case .failure(let error): action = failed(.loadCode, error, &machine)
                }

            case .loadRefreshToken(let digest):
                let result: Result<LookedUp, any Error>
                if let ahead = lookedAhead, ahead.lookahead == .refreshToken(digest) {
                    result = ahead.result
                    lookedAhead = nil
                } else {
                    result = await Self.lookUp(.refreshToken(digest), in: store)
                }
                switch result {
                case .success(.refreshToken(let lookup)): action = machine.refreshTokenLoaded(lookup)
                case .success(.code): preconditionFailure("a refresh-token lookup answered with a code")
                case .failure(let error): action = failed(.loadRefreshToken, error, &machine)
                }

            case .checkAccount(let account):
                do {
                    action = machine.accountChecked(try await accounts.status(of: account))
                } catch {
                    action = failed(.accountStatus, error, &machine)
                }

            case .redeemCode(let code, let issuance):
                do {
                    let outcome = try await store.redeemCode(code, issuing: issuance, at: now)
                    if outcome == .redeemed {
                        let grant = issuance.grant
                        observer.observe(.grantCreated(grant: grant.id, client: grant.client, account: grant.account))
                        observer.observe(.sessionStarted(grant: grant.id))
                    }
                    action = machine.codeRedeemed(outcome)
                } catch {
                    action = failed(.redeemCode, error, &machine)
                }

            case .rotateRefreshToken(let presented, let current, let successor, let accessToken):
                do {
                    let outcome = try await store.rotateRefreshToken(
                        presented,
                        replacing: current,
                        successor: successor,
                        accessToken: accessToken,
                        at: now
                    )
                    if outcome == .rotated {
                        observer.observe(.refreshTokenRotated(grant: successor.grant))
                    }
                    action = machine.refreshTokenRotated(outcome)
                } catch {
                    action = failed(.rotateRefreshToken, error, &machine)
                }

            case .replaceSession(let session):
                do {
                    let outcome = try await store.replaceSession(of: session.grant, with: session, at: now)
                    if case .replaced = outcome {
                        observer.observe(.sessionStarted(grant: session.grant))
                    } else {
                        observer.observe(.sessionStartFailed(grant: session.grant))
                    }
                    action = machine.sessionReplaced(outcome)
                } catch {
                    observer.observe(.sessionStartFailed(grant: session.grant))
                    action = failed(.replaceSession, error, &machine)
                }

            case .revokeGrant(let grant, let reason):
                if reason == .codeReplayed {
                    observer.observe(.codeReplayDetected(grant: grant, peerAddress: request.peerAddress))
                } else if reason == .refreshTokenReused {
                    observer.observe(.refreshTokenReuseDetected(grant: grant, peerAddress: request.peerAddress))
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

    /// What a lookup found.
    enum LookedUp: Sendable {
        case code(AuthorizationCode?)
        case refreshToken(RefreshTokenLookup?)
    }

    private static func lookUp(
        _ lookahead: ExchangeStateMachine.Lookahead,
        in store: any GrantStore
    ) async -> Result<LookedUp, any Error> {
        do {
            switch lookahead {
            case .code(let digest): return .success(.code(try await store.authorizationCode(digest)))
            case .refreshToken(let digest): return .success(.refreshToken(try await store.refreshToken(digest)))
            }
        } catch {
            return .failure(error)
        }
    }

    private static func admit(
        _ key: RateLimitKey,
        at now: Date,
        by rateLimiter: any RateLimiter
    ) async -> Result<RateLimitDecision, any Error> {
        do {
            return .success(try await rateLimiter.admit(key, at: now))
        } catch {
            return .failure(error)
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
}
