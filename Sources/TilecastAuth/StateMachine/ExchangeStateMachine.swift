// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The decisions of one ios-session request, as a pure state machine.
///
/// The machine does no I/O: it has no store and no clock of its own — it is given the request's one
/// reading of the clock — and it mints the secrets of what it stores from the random source it is given.
/// Each input method takes the result of the previous action and returns the next ``Action``, which
/// carries everything the call needs: the records to store, secrets minted, as in postgres-nio's
/// `ConnectionStateMachine`. The driver (``AuthEngine/handle(request:)``) only performs the action,
/// reports what happened to the observer and feeds the result back, until the machine says `.respond`.
/// Every decision is therefore testable step by step, without a store.
///
/// The order of its steps is the security argument. Everything that can refuse a request runs *before*
/// anything is consumed ("refuse before consume"): a refused request leaves the store exactly as it was,
/// except for the revocation RFC 6749 §4.1.2 and RFC 9700 §4.14.2 demand when a used code or a rotated
/// refresh token comes back.
///
/// ```
///                 start ──(not POST)──────────────────────────────────────────────► respond 405
///                   │
///                 admit ──(limited)───────────────────────────────────────────────► respond 429
///                   │
///     origin, media type, size, JSON, parameters ──(bad)──────────────────────────► respond 4xx
///                   │
///        ┌──────────┴──────────────────┐
///   loadCode                       loadRefreshToken
///        │ client, redirect URI,        │ client, revoked, expired ──(bad)────────► respond 400
///        │ S256, verifier ──(bad)──► 400│
///        │ used ──► revokeGrant ──► 400 │ rotated/retired ──► revokeGrant ──► 400
///        │ expired ───────────────► 400 │   (unless within the reuse leeway)
///   checkAccount ──(inactive)──► 403   checkAccount ──(inactive)──► 403
///        │                              │
///   redeemCode ──(already)──► revokeGrant ──► 400
///        │                         rotateRefreshToken ──(superseded)──► re-evaluate (as loaded)
///        │                              │
///        │                              ├──(studio_session)── replaceSession ──(failed)──► 200, no cookie
///        │                              │   (or both in one: rotateRefreshTokenStartingSession)
///        ▼                              ▼                           ▼
///   200 + cookie                   200, no cookie             200 + cookie
/// ```
struct ExchangeStateMachine {
    /// The cases whose payloads are large — an issuance, a rotation, the answer — are `indirect`: every
    /// step moves an action and a state, and boxed, those moves copy a reference instead of hundreds of
    /// bytes (an action was 472 bytes and a state 640; now 65 and 128, 129 on Apple platforms).
    /// Measured side by side, this took a tenth off an exchange and a refresh. A code's redemption is
    /// one object (``PlannedRedemption``) that the action and the state both hold, so that one
    /// allocation serves the two; a refresh token's rotation likewise (``PlannedRotation``).
    enum Action {
        /// Ask the rate limiter to admit an attempt for this key.
        case admit(RateLimitKey)
        /// Load the authorization code with this digest.
        case loadCode(SecretDigest)
        /// Load the refresh token with this digest and its grant.
        case loadRefreshToken(SecretDigest)
        /// Ask the account directory for this account's status.
        case checkAccount(AccountID)
        /// Redeem the planned redemption's code, storing its issuance — one atomic operation.
        case redeemCode(PlannedRedemption)
        /// Rotate the planned rotation's token: the presented token, the current token the grant must
        /// still have, the successor and the access token to store — one atomic operation.
        case rotateRefreshToken(PlannedRotation)
        /// Rotate as ``rotateRefreshToken(_:)`` does and, with it, store the planned rotation's
        /// ``PlannedRotation/startingSession`` as the grant's only session — one atomic operation, where
        /// the store has it.
        case rotateRefreshTokenStartingSession(PlannedRotation)
        /// Store this session as its grant's only one — one atomic operation.
        case replaceSession(StudioSession)
        /// Revoke the grant because a used code or rotated refresh token came back.
        case revokeGrant(GrantID, RevocationReason)
        /// Send this answer. Not `indirect`: the outcome boxes a success's payload itself, so a refusal —
        /// the most frequent answer under attack — takes no allocation of its own.
        case respond(ExchangeOutcome)
    }

    /// A refresh in progress: the token presented, the current token the rotation must find, and what
    /// the rotation and its answer read of the grant — its id, its expiry, its scope.
    ///
    /// A value of 106 bytes that the state holds inline: not the token and grant it was loaded with,
    /// which took an object of their own (384 bytes, allocated and freed on every refresh) to keep the
    /// state small.
    struct RefreshAttempt {
        let presented: SecretDigest
        let current: SecretDigest
        let grant: GrantID
        let grantExpiresAt: Date
        /// The grant's scope, which the credential returns (RFC 6749 §6: identical on every refresh).
        let scope: Scope
        let studioSession: Bool
        /// Which rotation this attempt is, counting from 1; more than 1 only within a reuse leeway. The
        /// attempt on a record the store remembered is 0 (``refreshTokenLoaded(_:remembered:)``).
        let rotations: UInt8

        /// The attempt to rotate `current` for the token `presented`, found with `lookup`.
        init(
            presented: SecretDigest,
            lookup: borrowing RefreshTokenLookup,
            current: SecretDigest,
            studioSession: Bool,
            rotations: UInt8
        ) {
            self.presented = presented
            self.current = current
            self.grant = lookup.grant.id
            self.grantExpiresAt = lookup.grant.expiresAt
            self.scope = lookup.grant.scope
            self.studioSession = studioSession
            self.rotations = rotations
        }
    }

    enum State {
        case initial(EndpointRequest)
        case admitting(EndpointRequest)
        /// The code's digest and what its checks compare — the redirect URI, the verifier's SHA-256 — not
        /// the code's text: with it the state was 129 bytes, one more than the compiler copies inline, so
        /// that each of an exchange's 26 moves of its state was a call of `memmove`. The verifier is hashed
        /// with the code, together (``OpaqueToken/presentedDigest(_:as:hashedWith:)``).
        case loadingCode(SecretDigest, redirectURI: JSONText, verifierDigest: SHA256Words)
        /// The code's digest and what its grant is made of; small enough to need no box.
        case checkingCodeAccount(SecretDigest, ClientID, AccountID, Scope)
        case redeemingCode(PlannedRedemption)
        /// The presented token's digest and whether to start a session; the token's text is not needed
        /// again.
        case loadingRefreshToken(SecretDigest, studioSession: Bool)
        case checkingRefreshAccount(RefreshAttempt)
        case rotatingRefreshToken(PlannedRotation)
        indirect case replacingSession(IssuedCredential, SessionPlan, OpaqueToken)
        case revokingGrant(RefusalReason)
        case finished
    }

    /// How many times a refresh may retry after being superseded within the reuse leeway.
    static let maximumRotations: UInt8 = 3

    /// The engine's configuration and random source, shared by reference.
    let settings: ExchangeSettings
    /// The request's one reading of the clock; every expiry is measured against it.
    let now: Date
    var state: State

    var configuration: EngineConfiguration { settings.configuration }
    /// Where the secrets the machine's actions carry come from.
    var randomSource: any RandomSource { settings.randomSource }

    init(request: EndpointRequest, settings: ExchangeSettings, now: Date) {
        self.settings = settings
        self.now = now
        self.state = .initial(request)
    }

    init(request: EndpointRequest, configuration: EngineConfiguration, now: Date, randomSource: any RandomSource) {
        self.init(
            request: request,
            settings: ExchangeSettings(configuration: configuration, randomSource: randomSource),
            now: now
        )
    }

    // MARK: Inputs

    /// Starts the request: only `POST` goes on to the rate limiter (RFC 6749 §3.2).
    mutating func start() -> Action {
        guard case .initial = state else { preconditionFailure("start() called in \(state)") }
        guard case .initial(let request) = takeState() else { preconditionFailure(Self.stateChanged) }
        guard request.isPost else { return refuse(.methodNotAllowed) }
        let key = RateLimitKey.peer(request.peerAddress, ipv6PrefixLength: configuration.rateLimitIPv6PrefixLength)
        state = .admitting(request)
        return .admit(key)
    }

    /// The rate limiter answered. A limited request is refused before the body is read or the store is
    /// touched (RFC 6585 §4); an admitted one is screened and parsed.
    mutating func admitted(_ decision: RateLimitDecision) -> Action {
        guard case .admitting = state else { preconditionFailure("admitted(_:) called in \(state)") }
        guard case .admitting(let request) = takeState() else { preconditionFailure(Self.stateChanged) }
        if case .limited(let seconds) = decision {
            // A custom limiter's answer is clamped: Retry-After is at least one second (RFC 9110 §10.2.3).
            return refuse(.rateLimited(retryAfterSeconds: max(1, seconds)))
        }
        // Held here, the settings keep their configuration alive for the two calls, which can then be lent
        // it where it lies; through `self`, each call was given a copy of its own (found with uprobes on
        // the configuration's value witness), retaining each of its strings and sets and releasing them.
        let settings = self.settings
        if let error = request.screeningError(
            allowedOrigins: settings.configuration.allowedOrigins,
            maximumBodyBytes: settings.configuration.maximumBodyBytes
        ) {
            return refuse(error.reason)
        }
        let parsed: ExchangeRequest
        do {
            parsed = try ExchangeRequest.parse(
                request.body,
                servedClient: settings.configuration.servedClient,
                callbackURI: settings.configuration.callbackURI
            )
        } catch {
            return refuse(error.reason)
        }
        switch consume parsed {
        case .authorizationCode(let exchange):
            guard
                let digests = OpaqueToken.presentedDigest(
                    exchange.code,
                    as: .authorizationCode,
                    hashedWith: exchange.codeVerifier
                )
            else {
                return refuse(.codeNotFound)
            }
            state = .loadingCode(digests.secret, redirectURI: exchange.redirectURI, verifierDigest: digests.companion)
            return .loadCode(digests.secret)
        case .refreshToken(let exchange):
            guard let digest = OpaqueToken.presentedDigest(exchange.refreshToken, as: .refreshToken) else {
                return refuse(.refreshTokenNotFound)
            }
            state = .loadingRefreshToken(digest, studioSession: exchange.studioSession)
            return .loadRefreshToken(digest)
        }
    }

    /// The account directory answered. An inactive account is refused with 403 before anything is
    /// consumed, rotated or created.
    mutating func accountChecked(_ status: AccountStatus) -> Action {
        switch state {
        case .checkingCodeAccount:
            guard case .checkingCodeAccount(let code, let client, let account, let scope) = takeState() else {
                preconditionFailure(Self.stateChanged)
            }
            guard status == .active else { return refuse(.accountInactive) }
            let plan = GrantPlan(
                client: client,
                account: account,
                scope: scope,
                now: now,
                lifetimes: settings.lifetimes,
                issuesNativeCredential: configuration.issuesNativeCredential
            )
            let minted = MintedGrant.mint(nativeCredential: plan.issuesNativeCredential, using: randomSource)
            let redemption = PlannedRedemption(
                code: code,
                plan: plan,
                minted: minted,
                cookieConfiguration: configuration.cookie
            )
            state = .redeemingCode(redemption)
            return .redeemCode(redemption)
        case .checkingRefreshAccount:
            guard case .checkingRefreshAccount(let attempt) = takeState() else {
                preconditionFailure(Self.stateChanged)
            }
            guard status == .active else { return refuse(.accountInactive) }
            return rotate(attempt)
        default:
            preconditionFailure("accountChecked(_:) called in \(state)")
        }
    }

    /// The revocation a replay or reuse demands is done; the request is refused either way.
    mutating func grantRevoked(_ outcome: GrantRevocation) -> Action {
        guard case .revokingGrant(let reason) = state else {
            preconditionFailure("grantRevoked(_:) called in \(state)")
        }
        return refuse(reason)
    }

    /// A backend call failed. Nothing was changed by it, so the request is refused with 503 — except
    /// when the failure was starting the Studio session of a refresh: the refresh token has already
    /// rotated, so the new credential is returned with `authenticated: false` and no cookie, as the
    /// endpoint's contract requires.
    mutating func backendFailed(_ operation: BackendOperation) -> Action {
        if case .replacingSession(let credential, _, _) = state {
            state = .finished
            return .respond(.success(credential: credential, cookie: nil))
        }
        return refuse(.backendUnavailable(operation))
    }

    // MARK: Helpers

    /// What a step's second look at the state finds changed: never, as nothing runs between the look at
    /// its case and its taking.
    static let stateChanged = "the state changed between the look at its case and its taking"

    /// Moves the state out for a step to read, leaving `.finished` until the step sets the next one; every
    /// step that takes it sets a state on each of its paths, or refuses, which finishes. Binding a
    /// payload where it lay in `state` copied it — retaining the request's buffers and strings — only for
    /// the step to overwrite the state and release them again.
    ///
    /// The state is moved out of its place and `.finished` put there, with nothing in between that could
    /// throw or read it: one move of the state, where `swap` made three.
    ///
    /// A step checks the case where the state lies, then binds the payload of the taken state with
    /// `guard case`. A `switch` over the taken state, whose other branch bound the whole state to print
    /// it, copied the payload out and destroyed the taken state: for a request, four retains and four
    /// releases per step, counted with uprobes on the runtime's reference counting.
    mutating func takeState() -> State {
        withUnsafeMutablePointer(to: &state) { place in
            let taken = place.move()
            place.initialize(to: .finished)
            return taken
        }
    }

    mutating func refuse(_ reason: RefusalReason) -> Action {
        state = .finished
        return .respond(.refused(EndpointError(reason)))
    }

    /// Revokes `grant` because a used code or a rotated refresh token came back; once that is done the
    /// request is refused with `refusal` (RFC 6749 §4.1.2, RFC 9700 §4.14.2).
    mutating func revoke(_ grant: GrantID, because reason: RevocationReason, refusing refusal: RefusalReason) -> Action
    {
        state = .revokingGrant(refusal)
        return .revokeGrant(grant, reason)
    }

    /// Whole seconds from `now` to `date`: what `expires_in` and `Max-Age` promise.
    func secondsUntil(_ date: Date) -> Int {
        now.wholeSeconds(until: date)
    }

    /// The earlier of `now + lifetime` and `cap`.
    func expiry(after lifetime: TimeInterval, cappedAt cap: Date) -> Date {
        now.adding(lifetime, cappedAt: cap)
    }
}

extension ExchangeStateMachine.State: CustomStringConvertible {
    /// The state's name only. States hold the presented code, verifier or refresh token, and this is what
    /// a `preconditionFailure` prints, so it must never show them.
    var description: String {
        switch self {
        case .initial: "initial"
        case .admitting: "admitting"
        case .loadingCode: "loadingCode"
        case .checkingCodeAccount: "checkingCodeAccount"
        case .redeemingCode: "redeemingCode"
        case .loadingRefreshToken: "loadingRefreshToken"
        case .checkingRefreshAccount: "checkingRefreshAccount"
        case .rotatingRefreshToken: "rotatingRefreshToken"
        case .replacingSession: "replacingSession"
        case .revokingGrant: "revokingGrant"
        case .finished: "finished"
        }
    }
}

/// What every exchange of one engine reads and none changes: the configuration and the random source.
///
/// Held once, by reference, so that starting a machine retains one object: a machine that held the
/// configuration by value copied it at every request, retaining each of its strings and sets and
/// releasing them again when the request ended.
final class ExchangeSettings: Sendable {
    let configuration: EngineConfiguration
    let randomSource: any RandomSource
    /// The configuration's lifetimes, in seconds.
    let lifetimes: LifetimeIntervals

    init(configuration: EngineConfiguration, randomSource: any RandomSource) {
        self.configuration = configuration
        self.randomSource = randomSource
        self.lifetimes = LifetimeIntervals(configuration.lifetimes)
    }
}

/// A code's redemption as the machine plans it once the account is found active: the code, the plan of
/// its grant, the secrets minted for it, and the records to store.
///
/// Immutable, and held by both the ``ExchangeStateMachine/Action/redeemCode(_:)`` action that asks the
/// store and the ``ExchangeStateMachine/State/redeemingCode(_:)`` state that waits for its answer: one
/// allocation where two boxes of an `indirect` case each were one.
final class PlannedRedemption: Sendable {
    /// The digest of the code to redeem.
    let code: SecretDigest
    let plan: GrantPlan
    let minted: MintedGrant
    /// The grant, tokens and session to store with the redemption, made of `plan` and `minted`.
    let issuance: GrantIssuance
    /// The attributes of the session cookie the answer sets.
    let cookieConfiguration: SessionCookieConfiguration

    /// Takes `plan` and `minted` over: the machine makes them for this redemption alone, and a borrowed
    /// plan was copied, retaining its strings, to be stored.
    init(
        code: SecretDigest,
        plan: consuming GrantPlan,
        minted: consuming MintedGrant,
        cookieConfiguration: SessionCookieConfiguration
    ) {
        self.code = code
        self.issuance = plan.issuance(minted)
        self.plan = plan
        self.minted = minted
        self.cookieConfiguration = cookieConfiguration
    }

    /// The credential the redemption issues, or `nil` when the server issues none.
    var credential: IssuedCredential? { plan.credential(minted) }

    /// The cookie of the session the redemption starts.
    var cookie: SessionCookie { plan.cookie(minted, configuration: cookieConfiguration) }
}

/// A refresh token's rotation as the machine plans it once the account is found active: the attempt, the
/// plan, the secrets minted for it, and the records to store.
///
/// Immutable, and held by both the action that asks the store
/// (``ExchangeStateMachine/Action/rotateRefreshToken(_:)`` or
/// ``ExchangeStateMachine/Action/rotateRefreshTokenStartingSession(_:)``) and the
/// ``ExchangeStateMachine/State/rotatingRefreshToken(_:)`` state that waits for its answer: one allocation
/// where two boxes of an `indirect` case each were one, and each step reads what it needs from it instead
/// of copying the attempt, the plan and the secrets out of a box.
final class PlannedRotation: Sendable {
    let attempt: ExchangeStateMachine.RefreshAttempt
    let plan: RotationPlan
    let minted: MintedRotation
    /// The successor refresh token to store, made of `plan` and `minted`.
    let successor: RefreshToken
    /// The access token to store, made of `plan` and `minted`.
    let accessToken: AccessToken
    /// The Studio session to start with the rotation, when the refresh asked for one: its id is
    /// `minted.session`, and it ends with the grant at the latest.
    let startingSession: StudioSession?

    /// Seconds from the request's time until the new access token expires: the credential's
    /// `expires_in` (RFC 6749 §5.1).
    var accessTokenExpiresIn: Int { plan.now.wholeSeconds(until: plan.accessTokenExpiresAt) }

    /// The credential the rotation issues, as a value.
    var credential: IssuedCredential {
        IssuedCredential(
            accessToken: minted.accessToken,
            expiresIn: accessTokenExpiresIn,
            refreshToken: minted.refreshToken,
            scope: attempt.scope
        )
    }

    /// The token presented.
    var presented: SecretDigest { plan.presented }
    /// The token the grant must still have as its current one for the rotation to take place.
    var current: SecretDigest { plan.current }

    init(
        attempt: ExchangeStateMachine.RefreshAttempt,
        plan: RotationPlan,
        minted: consuming MintedRotation,
        session: SessionPlan?
    ) {
        self.attempt = attempt
        self.plan = plan
        self.minted = minted
        self.successor = plan.successor(minted)
        self.accessToken = plan.accessToken(minted)
        if let session, let id = minted.session {
            self.startingSession = session.session(id)
        } else {
            self.startingSession = nil
        }
    }
}
