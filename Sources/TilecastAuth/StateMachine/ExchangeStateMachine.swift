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
///        ▼                              ▼                           ▼
///   200 + cookie                   200, no cookie             200 + cookie
/// ```
struct ExchangeStateMachine {
    enum Action {
        /// Ask the rate limiter to admit an attempt for this key — and, when the machine reads ahead,
        /// look up what the body presents while the limiter decides: the load action that follows an
        /// admission then names the same record, and the driver may answer it with that lookup's result.
        case admit(RateLimitKey, lookahead: Lookahead?)
        /// Load the authorization code with this digest.
        case loadCode(SecretDigest)
        /// Load the refresh token with this digest and its grant.
        case loadRefreshToken(SecretDigest)
        /// Ask the account directory for this account's status.
        case checkAccount(AccountID)
        /// Redeem the code with this digest, storing this issuance — one atomic operation.
        case redeemCode(SecretDigest, GrantIssuance)
        /// Rotate: the presented token, the current token the grant must still have, the successor and
        /// the access token to store — one atomic operation.
        case rotateRefreshToken(
            presented: SecretDigest,
            current: SecretDigest,
            successor: RefreshToken,
            accessToken: AccessToken
        )
        /// Store this session as its grant's only one — one atomic operation.
        case replaceSession(StudioSession)
        /// Revoke the grant because a used code or rotated refresh token came back.
        case revokeGrant(GrantID, RevocationReason)
        /// Send this answer.
        case respond(ExchangeOutcome)
    }

    /// A lookup the driver may run beside the rate limiter's admission: a read, which changes nothing, so
    /// running it for a request the limiter then refuses leaves the store as it was.
    enum Lookahead: Equatable, Sendable {
        case code(SecretDigest)
        case refreshToken(SecretDigest)
    }

    /// What the machine reads from an admitted request before it touches the store: the screening and
    /// parsing refusal, or what to load. Read after the admission, or — when reading ahead — before it,
    /// and acted on only after it, so that a limited request is refused for its limit first either way.
    enum Reading {
        case refusal(RefusalReason)
        case code(ExchangeRequest.AuthorizationCode, SecretDigest)
        case refreshToken(ExchangeRequest.RefreshToken, SecretDigest)
    }

    /// A refresh in progress: the token presented and the current token the rotation must find.
    struct RefreshAttempt {
        var presented: SecretDigest
        var lookup: RefreshTokenLookup
        var current: SecretDigest
        var studioSession: Bool
        /// How many rotations have been tried; more than one only within a reuse leeway.
        var rotations: Int
    }

    enum State {
        case initial(EndpointRequest)
        case admitting(EndpointRequest, Reading?)
        case loadingCode(ExchangeRequest.AuthorizationCode, SecretDigest)
        case checkingCodeAccount(SecretDigest, GrantPlan)
        case redeemingCode(GrantPlan, MintedGrant)
        case loadingRefreshToken(ExchangeRequest.RefreshToken, SecretDigest)
        case checkingRefreshAccount(RefreshAttempt)
        case rotatingRefreshToken(RefreshAttempt, RotationPlan, MintedRotation)
        case replacingSession(IssuedCredential, SessionPlan, OpaqueToken)
        case revokingGrant(RefusalReason)
        case finished
    }

    /// How many times a refresh may retry after being superseded within the reuse leeway.
    static let maximumRotations = 3

    let configuration: EngineConfiguration
    /// The request's one reading of the clock; every expiry is measured against it.
    let now: Date
    /// Where the secrets the machine's actions carry come from.
    let randomSource: any RandomSource
    /// Whether to read the body before the rate limiter answers, so that the driver can look up the
    /// presented code or token beside the admission (``GrantStore/overlapsLookupsWithAdmission``).
    let readsAhead: Bool
    var state: State

    init(
        request: EndpointRequest,
        configuration: EngineConfiguration,
        now: Date,
        randomSource: any RandomSource,
        readsAhead: Bool = false
    ) {
        self.configuration = configuration
        self.now = now
        self.randomSource = randomSource
        self.readsAhead = readsAhead
        self.state = .initial(request)
    }

    // MARK: Inputs

    /// Starts the request: only `POST` goes on to the rate limiter (RFC 6749 §3.2).
    mutating func start() -> Action {
        guard case .initial(let request) = state else { preconditionFailure("start() called in \(state)") }
        guard request.isPost else { return refuse(.methodNotAllowed) }
        let key = RateLimitKey.peer(request.peerAddress, ipv6PrefixLength: configuration.rateLimitIPv6PrefixLength)
        guard readsAhead else {
            state = .admitting(request, nil)
            return .admit(key, lookahead: nil)
        }
        let reading = Self.read(request, configuration: configuration)
        state = .admitting(request, reading)
        switch reading {
        case .refusal: return .admit(key, lookahead: nil)
        case .code(_, let digest): return .admit(key, lookahead: .code(digest))
        case .refreshToken(_, let digest): return .admit(key, lookahead: .refreshToken(digest))
        }
    }

    /// The rate limiter answered. A limited request is refused for its limit, whatever its body, and
    /// nothing is written for it (RFC 6585 §4; T-2); an admitted one is screened and parsed — or was,
    /// when reading ahead — and the store asked for what it presents.
    mutating func admitted(_ decision: RateLimitDecision) -> Action {
        guard case .admitting(let request, let early) = state else {
            preconditionFailure("admitted(_:) called in \(state)")
        }
        if case .limited(let seconds) = decision {
            // A custom limiter's answer is clamped: Retry-After is at least one second (RFC 9110 §10.2.3).
            return refuse(.rateLimited(retryAfterSeconds: max(1, seconds)))
        }
        switch early ?? Self.read(request, configuration: configuration) {
        case .refusal(let reason):
            return refuse(reason)
        case .code(let exchange, let digest):
            state = .loadingCode(exchange, digest)
            return .loadCode(digest)
        case .refreshToken(let exchange, let digest):
            state = .loadingRefreshToken(exchange, digest)
            return .loadRefreshToken(digest)
        }
    }

    /// Screens and parses a request, and takes the digest of the secret it presents (§4's order: the
    /// method was checked before the limiter; screening, then the body).
    static func read(_ request: EndpointRequest, configuration: EngineConfiguration) -> Reading {
        if let error = request.screeningError(configuration: configuration) {
            return .refusal(error.reason)
        }
        let parsed: ExchangeRequest
        do {
            parsed = try ExchangeRequest.parse(request.body, configuration: configuration)
        } catch {
            return .refusal(error.reason)
        }
        switch parsed {
        case .authorizationCode(let exchange):
            guard let digest = OpaqueToken.presentedDigest(exchange.code, as: .authorizationCode) else {
                return .refusal(.codeNotFound)
            }
            return .code(exchange, digest)
        case .refreshToken(let exchange):
            guard let digest = OpaqueToken.presentedDigest(exchange.refreshToken, as: .refreshToken) else {
                return .refusal(.refreshTokenNotFound)
            }
            return .refreshToken(exchange, digest)
        }
    }

    /// The account directory answered. An inactive account is refused with 403 before anything is
    /// consumed, rotated or created.
    mutating func accountChecked(_ status: AccountStatus) -> Action {
        switch state {
        case .checkingCodeAccount(let code, let plan):
            guard status == .active else { return refuse(.accountInactive) }
            let minted = MintedGrant.mint(nativeCredential: plan.issuesNativeCredential, using: randomSource)
            state = .redeemingCode(plan, minted)
            return .redeemCode(code, plan.issuance(minted))
        case .checkingRefreshAccount(let attempt):
            guard status == .active else { return refuse(.accountInactive) }
            return rotate(attempt)
        case .initial, .admitting, .loadingCode, .redeemingCode, .loadingRefreshToken, .rotatingRefreshToken,
            .replacingSession, .revokingGrant, .finished:
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
    func expiry(after lifetime: Duration, cappedAt cap: Date) -> Date {
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
