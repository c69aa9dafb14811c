// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ExchangeStateMachine {
    /// What to do with a refresh token as it stands.
    enum RefreshEvaluation: Equatable {
        /// Rotate, requiring `current` to still be the grant's current token.
        case rotate(current: SecretDigest)
        /// Refuse, changing nothing.
        case refuse(RefusalReason)
        /// Revoke the grant: a rotated or retired token came back.
        case revoke(GrantID)
    }

    /// The refresh token was loaded — or, `remembered`, taken from what the store remembers of its own
    /// writes (``GrantStore/rememberedRefreshToken(_:)``), which may be stale. A stale record's rotation
    /// is answered `.superseded` with the token as it stands, which is the first look at it a read would
    /// have given; so that the refresh gets as many rotations after that look as a read one does, the
    /// first attempt on a remembered record is rotation 0 and does not count against
    /// ``maximumRotations``.
    mutating func refreshTokenLoaded(_ lookup: consuming RefreshTokenLookup?, remembered: Bool = false) -> Action {
        guard case .loadingRefreshToken = state else {
            preconditionFailure("refreshTokenLoaded(_:) called in \(state)")
        }
        guard case .loadingRefreshToken(let presented, let studioSession) = takeState() else {
            preconditionFailure(Self.stateChanged)
        }
        guard let lookup = consume lookup else { return refuse(.refreshTokenNotFound) }
        switch evaluate(lookup, presented: presented) {
        case .refuse(let reason):
            return refuse(reason)
        case .revoke(let grant):
            return revoke(grant, because: .refreshTokenReused, refusing: .refreshTokenReused)
        case .rotate(let current):
            let attempt = RefreshAttempt(
                presented: presented,
                lookup: lookup,
                current: current,
                studioSession: studioSession,
                rotations: remembered ? 0 : 1
            )
            state = .checkingRefreshAccount(attempt)
            return .checkAccount(lookup.grant.account)
        }
    }

    /// Decides what a refresh token allows, in this order:
    ///
    /// 1. the token's client is the served client — checked first, so that another client's token is
    ///    refused untouched and can never trigger reuse detection (RFC 6749 §10.4);
    /// 2. the grant is not revoked (OAuth 2.1 §4.3.1: "validate that the grant … is still active");
    /// 3. neither the token's idle expiry nor the grant's absolute expiry has passed (RFC 9700 §4.14.2);
    /// 4. the token has not been used: a rotated or retired token revokes the grant (RFC 9700 §4.14.2,
    ///    OAuth 2.1 §4.3.1), unless the configuration's leeway lets the immediately previous token be
    ///    retried — within the leeway of its rotation's time on either side, so that a clock set back
    ///    never stretches the window.
    ///
    /// A grant with less than a second left counts as expired, so every `expires_in` is at least 1.
    func evaluate(_ lookup: RefreshTokenLookup, presented: SecretDigest) -> RefreshEvaluation {
        let token = lookup.token
        let grant = lookup.grant
        guard grant.client == configuration.servedClient else { return .refuse(.refreshTokenOfAnotherClient) }
        guard grant.revocation == nil else { return .refuse(.grantRevoked) }
        guard now < token.expiresAt, grant.expiresAt.timeIntervalSince(now) >= 1 else {
            return .refuse(.refreshTokenExpired)
        }
        switch token.state {
        case .active:
            return .rotate(current: presented)
        case .rotated(_, let successor):
            // A clock behind the one that rotated — another instance's, or this one's after an NTP step
            // back — by more than the leeway makes the token reuse, not a retry.
            guard token.isRetryWithinLeeway(of: grant, at: now, leeway: configuration.refreshTokenReuseLeeway)
            else {
                return .revoke(grant.id)
            }
            return .rotate(current: successor)
        case .retired:
            return .revoke(grant.id)
        }
    }

    /// The rotation for an attempt whose token is known to be usable and whose account is active.
    mutating func rotate(_ attempt: RefreshAttempt) -> Action {
        let (grant, grantExpiresAt) = (attempt.grant, attempt.grantExpiresAt)
        let lifetimes = settings.lifetimes
        let plan = RotationPlan(
            presented: attempt.presented,
            current: attempt.current,
            grant: grant,
            now: now,
            refreshTokenExpiresAt: expiry(after: lifetimes.refreshTokenIdle, cappedAt: grantExpiresAt),
            accessTokenExpiresAt: expiry(after: lifetimes.accessToken, cappedAt: grantExpiresAt)
        )
        let minted = MintedRotation.mint(session: attempt.studioSession, using: randomSource)
        let session = minted.session == nil ? nil : sessionPlan(for: grant, expiringBy: grantExpiresAt)
        let rotation = PlannedRotation(attempt: attempt, plan: plan, minted: minted, session: session)
        state = .rotatingRefreshToken(rotation)
        // With a session, it is first asked to start with the rotation, in one operation of the store.
        return rotation.startingSession == nil
            ? .rotateRefreshToken(rotation) : .rotateRefreshTokenStartingSession(rotation)
    }

    /// The Studio session the refresh of `attempt` starts: it ends with the grant at the latest.
    private func sessionPlan(for attempt: RefreshAttempt) -> SessionPlan {
        sessionPlan(for: attempt.grant, expiringBy: attempt.grantExpiresAt)
    }

    /// The Studio session a refresh of the grant `grant`, which expires at `grantExpiresAt`, starts.
    private func sessionPlan(for grant: GrantID, expiringBy grantExpiresAt: Date) -> SessionPlan {
        SessionPlan(
            grant: grant,
            now: now,
            expiresAt: expiry(after: settings.lifetimes.studioSession, cappedAt: grantExpiresAt)
        )
    }

    /// The store ran the rotation that starts the Studio session with it — or answered `nil`, as a
    /// store that starts sessions separately does, having written nothing: then the rotation alone is
    /// asked for, and the session follows it (``refreshTokenRotated(_:)``).
    mutating func refreshTokenRotatedStartingSession(_ outcome: RefreshRotation?) -> Action {
        guard case .rotatingRefreshToken(let rotation) = state, let session = rotation.minted.session else {
            preconditionFailure("refreshTokenRotatedStartingSession(_:) called in \(state)")
        }
        guard let outcome else { return .rotateRefreshToken(rotation) }
        guard case .rotated = outcome else { return refreshTokenRotated(outcome) }
        state = .finished
        return .respond(
            .success(
                credential: rotation.credential,
                cookie: cookie(of: session, sessionPlan(for: rotation.attempt))
            )
        )
    }

    /// The cookie of a Studio session that started.
    private func cookie(of session: OpaqueToken, _ plan: SessionPlan) -> SessionCookie {
        SessionCookie(session: session, maxAge: secondsUntil(plan.expiresAt), configuration: configuration.cookie)
    }

    /// The rotation ran.
    ///
    /// When another request rotated the token first, the token is evaluated again as it now stands:
    /// under strict rotation that is reuse, and revokes the grant; within a leeway it may be a retry of
    /// the immediately previous token, which rotates again — a bounded number of times.
    mutating func refreshTokenRotated(_ outcome: RefreshRotation) -> Action {
        guard case .rotatingRefreshToken(let rotation) = state else {
            preconditionFailure("refreshTokenRotated(_:) called in \(state)")
        }
        // The attempt is read where the rotation holds it: a copy would retain its grant's strings.
        switch outcome {
        case .rotated:
            guard rotation.attempt.studioSession, let session = rotation.minted.session else {
                state = .finished
                return .respond(.rotated(rotation))
            }
            let sessionPlan = sessionPlan(for: rotation.attempt)
            state = .replacingSession(rotation.credential, sessionPlan, session)
            return .replaceSession(sessionPlan.session(session))
        case .superseded(let lookup):
            let attempt = rotation.attempt
            switch evaluate(lookup, presented: attempt.presented) {
            case .refuse(let reason):
                return refuse(reason)
            case .revoke(let grant):
                return revoke(grant, because: .refreshTokenReused, refusing: .refreshTokenReused)
            case .rotate(let current):
                guard attempt.rotations < Self.maximumRotations else { return refuse(.refreshTokenContended) }
                return rotate(
                    RefreshAttempt(
                        presented: attempt.presented,
                        lookup: lookup,
                        current: current,
                        studioSession: attempt.studioSession,
                        rotations: attempt.rotations + 1
                    )
                )
            }
        case .grantNotLive:
            return refuse(.grantRevoked)
        case .notFound:
            return refuse(.refreshTokenNotFound)
        }
    }

    /// The session replacement ran. If the grant was revoked between the rotation and now, the session
    /// cannot start: the rotated credential is still returned, with `authenticated: false`.
    mutating func sessionReplaced(_ outcome: SessionReplacement) -> Action {
        guard case .replacingSession(let credential, let plan, let session) = state else {
            preconditionFailure("sessionReplaced(_:) called in \(state)")
        }
        state = .finished
        switch outcome {
        case .replaced:
            return .respond(.success(credential: credential, cookie: cookie(of: session, plan)))
        case .grantNotLive:
            return .respond(.success(credential: credential, cookie: nil))
        }
    }
}
