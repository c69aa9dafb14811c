// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

/// The pure state machine, driven step by step without a store.
struct ExchangeStateMachineTests {
    private static let now = Date(timeIntervalSince1970: 1_800_000_000)
    private static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    private static let challenge = CodeChallenge(method: .s256, value: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    private static let grantID = GrantID(rawValue: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!)

    private func machine(
        body: String,
        configuration: EngineConfiguration = EngineConfiguration()
    ) -> ExchangeStateMachine {
        ExchangeStateMachine(
            request: EndpointRequest(
                method: "POST",
                headers: ["Content-Type": "application/json"],
                body: Array(body.utf8),
                peerAddress: "192.0.2.1"
            ),
            configuration: configuration,
            now: Self.now,
            randomSource: SeededRandomSource()
        )
    }

    /// A machine for a code exchange that has been admitted and is waiting for the code to load.
    private func loadingCode(_ code: OpaqueToken, verifier: String = verifier) -> ExchangeStateMachine {
        var machine = machine(body: codeBody(code, verifier: verifier))
        _ = machine.start()
        _ = machine.admitted(.admitted)
        return machine
    }

    private func codeBody(_ code: OpaqueToken, verifier: String = verifier) -> String {
        #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"\#(code.unredactedValue)","redirect_uri":"tilecast-ios://oauth/callback","code_verifier":"\#(verifier)"}"#
    }

    private func storedCode(
        _ code: OpaqueToken,
        redeemed: Bool = false,
        client: ClientID = .tilecastIOS,
        challenge: CodeChallenge = challenge
    ) -> AuthorizationCode {
        AuthorizationCode(
            digest: code.digest,
            client: client,
            account: "a",
            redirectURI: "tilecast-ios://oauth/callback",
            scope: Scope("profile")!,
            challenge: challenge,
            issuedAt: Self.now,
            expiresAt: Self.now.addingTimeInterval(60),
            redemption: redeemed ? .init(grant: Self.grantID, redeemedAt: Self.now) : nil
        )
    }

    private func refusal(_ action: ExchangeStateMachine.Action) -> RefusalReason? {
        if case .respond(.refused(let error)) = action { return error.reason }
        return nil
    }

    @Test("A code exchange asks the limiter, loads the code, checks the account, then redeems")
    func codeHappyPath() throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var machine = machine(body: codeBody(code))
        #expect(machine.start() == .admit(.peer("192.0.2.1")))
        #expect(machine.admitted(.admitted) == .loadCode(code.digest))
        #expect(machine.codeLoaded(storedCode(code)) == .checkAccount("a"))
        guard case .redeemCode(let redemption) = machine.accountChecked(.active) else {
            throw Failure("expected .redeemCode")
        }
        let redeemed = redemption.code
        let issuance = redemption.issuance
        // The action carries the whole issuance, secrets minted: the driver only stores it.
        #expect(redeemed == code.digest)
        #expect(issuance.grant.scope.rawValue == "profile")
        #expect(issuance.grant.account == "a")
        #expect(issuance.grant.expiresAt == Self.now.addingTimeInterval(365 * 86_400))
        #expect(issuance.accessToken?.expiresAt == Self.now.addingTimeInterval(900))
        #expect(issuance.grant.currentRefreshToken == issuance.refreshToken?.digest)
        #expect(issuance.grant.session == issuance.session?.digest)
        guard case .respond(let outcome) = machine.codeRedeemed(.redeemed), case .redeemed(let answered) = outcome,
            let (credential, cookie) = outcome.answer
        else {
            throw Failure("expected the redemption as the answer")
        }
        #expect(answered === redemption)
        // Written exactly as the credential and cookie it issued.
        let written = EndpointResponse(outcome)
        let expected = EndpointResponse(.success(credential: credential, cookie: cookie))
        #expect(written.status == 200)
        #expect(written.body == expected.body)
        #expect(written.headers == expected.headers)
        #expect(credential?.accessToken.digest == issuance.accessToken?.digest)
        #expect(credential?.refreshToken.digest == issuance.refreshToken?.digest)
        let sessionID = try #require(cookie?.headerValue.split(separator: ";").first?.split(separator: "=").last)
        #expect(OpaqueToken(presented: String(sessionID), as: .studioSession)?.digest == issuance.session?.digest)
    }

    @Test("A wrong verifier is refused right after the code is loaded: nothing else happens")
    func wrongVerifier() throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var machine = loadingCode(code, verifier: String(repeating: "x", count: 43))
        #expect(refusal(machine.codeLoaded(storedCode(code))) == .codeVerifierMismatch)
    }

    /// The verifier is hashed with the code where it fits one SHA-256 block (55 characters) and alone
    /// where it does not: both ways, its own digest is what is checked.
    @Test("Verifiers of every length class are checked against their own S256 challenge", arguments: [43, 55, 56, 128])
    func verifierLengths(length: Int) throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        let verifier = String((0..<length).map { Array("abcdefghijklmnopqrstuvwxyz0123456789-._~")[$0 % 40] })
        let challenge = CodeChallenge.s256(for: verifier)
        var matching = loadingCode(code, verifier: verifier)
        #expect(matching.codeLoaded(storedCode(code, challenge: challenge)) == .checkAccount("a"))
        // One character changed, at the end — past the first block for the longest.
        var mismatching = loadingCode(code, verifier: String(verifier.dropLast()) + "Z")
        #expect(refusal(mismatching.codeLoaded(storedCode(code, challenge: challenge))) == .codeVerifierMismatch)
    }

    @Test("A used code with valid proof revokes the grant it became; a wrong verifier does not")
    func replayOrdering() throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var valid = loadingCode(code)
        guard case .revokeGrant(let grant, let reason) = valid.codeLoaded(storedCode(code, redeemed: true)) else {
            throw Failure("expected .revokeGrant")
        }
        #expect(grant == Self.grantID)
        #expect(reason == .codeReplayed)
        #expect(refusal(valid.grantRevoked(.notFound)) == .codeReplayed)

        var invalid = loadingCode(code, verifier: String(repeating: "y", count: 43))
        #expect(refusal(invalid.codeLoaded(storedCode(code, redeemed: true))) == .codeVerifierMismatch)
    }

    @Test("Another client's code is refused before replay handling")
    func otherClientBeforeReplay() throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var machine = loadingCode(code)
        #expect(
            refusal(machine.codeLoaded(storedCode(code, redeemed: true, client: "tilecast-web")))
                == .codeIssuedToAnotherClient
        )
    }

    @Test("An inactive account is refused before anything is redeemed")
    func inactiveAccount() throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var machine = loadingCode(code)
        #expect(machine.codeLoaded(storedCode(code)) == .checkAccount("a"))
        #expect(refusal(machine.accountChecked(.inactive)) == .accountInactive)
    }

    @Test("An expired code is refused before the account is even asked about")
    func expiredCode() {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var machine = loadingCode(code)
        var stored = storedCode(code)
        stored.expiresAt = Self.now
        #expect(refusal(machine.codeLoaded(stored)) == .codeExpired)
    }

    @Test("Losing the redemption race is a replay")
    func lostRace() throws {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        var machine = loadingCode(code)
        #expect(machine.codeLoaded(storedCode(code)) == .checkAccount("a"))
        guard case .redeemCode = machine.accountChecked(.active) else { throw Failure("expected .redeemCode") }
        #expect(
            machine.codeRedeemed(.alreadyRedeemed(grant: Self.grantID)) == .revokeGrant(Self.grantID, .codeReplayed)
        )
    }

    @Test("A limited request is refused before the body is even parsed")
    func limited() {
        var machine = machine(body: "not json")
        _ = machine.start()
        #expect(refusal(machine.admitted(.limited(retryAfterSeconds: 7))) == .rateLimited(retryAfterSeconds: 7))
    }

    @Test("A method other than POST is refused before the limiter is asked")
    func method() {
        var machine = ExchangeStateMachine(
            request: EndpointRequest(method: "PUT", headers: [:], body: [], peerAddress: nil),
            configuration: EngineConfiguration(),
            now: Self.now,
            randomSource: SeededRandomSource()
        )
        #expect(refusal(machine.start()) == .methodNotAllowed)
    }

    // MARK: Refresh evaluation

    private func lookup(
        state: RefreshToken.State,
        current: SecretDigest,
        client: ClientID = .tilecastIOS
    ) -> (RefreshTokenLookup, SecretDigest) {
        let presented = SecretDigest(of: "presented")
        let token = RefreshToken(
            digest: presented,
            grant: Self.grantID,
            issuedAt: Self.now,
            expiresAt: Self.now.addingTimeInterval(3600),
            state: state
        )
        let grant = Grant(
            id: Self.grantID,
            client: client,
            account: "a",
            scope: .empty,
            createdAt: Self.now,
            expiresAt: Self.now.addingTimeInterval(86_400),
            currentRefreshToken: current,
            session: nil
        )
        return (RefreshTokenLookup(token: token, grant: grant), presented)
    }

    @Test("Refresh evaluation: client first, then revocation, expiry, and reuse")
    func refreshEvaluation() {
        let successor = SecretDigest(of: "successor")
        let strict = machine(body: "{}")
        let lenient = machine(body: "{}", configuration: EngineConfiguration(refreshTokenReuseLeeway: .seconds(10)))

        let (active, presented) = lookup(state: .active, current: SecretDigest(of: "presented"))
        #expect(strict.evaluate(active, presented: presented) == .rotate(current: presented))

        let (rotated, _) = lookup(
            state: .rotated(rotatedAt: Self.now.addingTimeInterval(-5), successor: successor),
            current: successor
        )
        #expect(strict.evaluate(rotated, presented: presented) == .revoke(Self.grantID))
        #expect(lenient.evaluate(rotated, presented: presented) == .rotate(current: successor))

        let (stale, _) = lookup(
            state: .rotated(rotatedAt: Self.now.addingTimeInterval(-11), successor: successor),
            current: successor
        )
        #expect(lenient.evaluate(stale, presented: presented) == .revoke(Self.grantID))

        let (older, _) = lookup(
            state: .rotated(rotatedAt: Self.now, successor: successor),
            current: SecretDigest(of: "newer")
        )
        #expect(lenient.evaluate(older, presented: presented) == .revoke(Self.grantID))

        let (retired, _) = lookup(state: .retired(retiredAt: Self.now), current: successor)
        #expect(lenient.evaluate(retired, presented: presented) == .revoke(Self.grantID))

        let (foreign, _) = lookup(state: .retired(retiredAt: Self.now), current: successor, client: "tilecast-web")
        #expect(strict.evaluate(foreign, presented: presented) == .refuse(.refreshTokenOfAnotherClient))

        var (revoked, _) = lookup(state: .rotated(rotatedAt: Self.now, successor: successor), current: successor)
        revoked.grant.revocation = Grant.Revocation(revokedAt: Self.now, reason: .signedOut)
        #expect(strict.evaluate(revoked, presented: presented) == .refuse(.grantRevoked))
    }

    /// A refresh that starts no session answers with the rotation the store ran — no credential made and
    /// boxed for it — and that answer is written exactly as the credential the rotation issued.
    @Test("A refresh without a session answers with its rotation, written as the credential it issued")
    func refreshAnswersWithItsRotation() throws {
        let token = OpaqueToken.mint(.refreshToken, using: SeededRandomSource())
        var machine = machine(
            body:
                #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"\#(token.unredactedValue)"}"#
        )
        _ = machine.start()
        _ = machine.admitted(.admitted)
        var (found, _) = lookup(state: .active, current: token.digest)
        found.token.digest = token.digest
        found.grant.scope = try #require(Scope("tiles:read profile"))
        #expect(machine.refreshTokenLoaded(found) == .checkAccount("a"))
        guard case .rotateRefreshToken(let rotation) = machine.accountChecked(.active) else {
            throw Failure("expected .rotateRefreshToken")
        }
        guard case .respond(.rotated(let answered)) = machine.refreshTokenRotated(.rotated) else {
            throw Failure("expected the rotation as the answer")
        }
        #expect(answered === rotation)
        let credential = rotation.credential
        #expect(credential.expiresIn == 900)
        #expect(credential.scope.rawValue == "tiles:read profile")
        let written = EndpointResponse(.rotated(rotation))
        let expected = EndpointResponse(.success(credential: credential, cookie: nil))
        #expect(written.status == 200)
        #expect(written.body == expected.body)
        #expect(written.headers == expected.headers)
        let body = String(decoding: written.body, as: UTF8.self)
        #expect(body.contains(#""access_token":"\#(rotation.minted.accessToken.unredactedValue)""#))
        #expect(body.contains(#""refresh_token":"\#(rotation.minted.refreshToken.unredactedValue)""#))
        #expect(body.hasPrefix(#"{"data":{"authenticated":false,"credential":{"token_type":"Bearer","#))
    }

    /// A machine for a refresh of `token` (with a Studio session) that is waiting for its rotation: the
    /// rotation alone, after a store that starts sessions separately answered `nil` to the rotation
    /// starting the session (or, `together`, that one).
    private func rotating(
        _ token: OpaqueToken,
        leeway: Duration = .zero,
        together: Bool = false,
        remembered: Bool = false
    ) throws -> (ExchangeStateMachine, RefreshTokenLookup) {
        var machine = machine(
            body:
                #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"\#(token.unredactedValue)","studio_session":true}"#,
            configuration: EngineConfiguration(refreshTokenReuseLeeway: leeway)
        )
        _ = machine.start()
        _ = machine.admitted(.admitted)
        var (found, _) = lookup(state: .active, current: token.digest)
        found.token.digest = token.digest
        #expect(machine.refreshTokenLoaded(found, remembered: remembered) == .checkAccount("a"))
        guard case .rotateRefreshTokenStartingSession(let rotation) = machine.accountChecked(.active) else {
            throw Failure("expected .rotateRefreshTokenStartingSession")
        }
        if !together {
            // The store answered that it starts sessions separately: the same planned rotation, alone.
            guard case .rotateRefreshToken(let alone) = machine.refreshTokenRotatedStartingSession(nil) else {
                throw Failure("expected the rotation alone")
            }
            #expect(alone === rotation)
        }
        return (machine, found)
    }

    @Test("A grant revoked between rotation and session start: the credential comes back without a cookie")
    func sessionGrantNotLive() throws {
        let random = SeededRandomSource()
        var (machine, _) = try rotating(.mint(.refreshToken, using: random))
        guard case .replaceSession = machine.refreshTokenRotated(.rotated) else {
            throw Failure("expected .replaceSession")
        }
        guard case .respond(.success(let credential, let cookie)) = machine.sessionReplaced(.grantNotLive) else {
            throw Failure("expected a success")
        }
        #expect(credential != nil)
        #expect(cookie == nil)
    }

    @Test(
        "Within a leeway, a refresh superseded again and again gives up with a retryable 503, revoking nothing",
        arguments: [false, true]
    )
    func contention(remembered: Bool) throws {
        let random = SeededRandomSource()
        let token = OpaqueToken.mint(.refreshToken, using: random)
        var (machine, found) = try rotating(token, leeway: .seconds(30), remembered: remembered)
        var action = ExchangeStateMachine.Action.respond(.refused(EndpointError(.codeNotFound)))
        // A rotation on a remembered record that finds it superseded says only that the record was stale:
        // that one is not counted, and the refresh gets as many rotations after it as one read fresh.
        let rotations = ExchangeStateMachine.maximumRotations + (remembered ? 1 : 0)
        for generation in 0..<rotations {
            // Each time, another request has just rotated the token to a new successor.
            let successor = SecretDigest(of: "successor-\(generation)")
            var superseded = found
            superseded.token.state = .rotated(rotatedAt: Self.now, successor: successor)
            superseded.grant.currentRefreshToken = successor
            action = machine.refreshTokenRotated(.superseded(current: superseded))
            if generation < rotations - 1 {
                // Asked with the session again; the store answers nil again, and the rotation comes alone.
                guard case .rotateRefreshTokenStartingSession(let rotation) = action else {
                    throw Failure("expected another rotation")
                }
                #expect(rotation.current == successor)
                guard case .rotateRefreshToken(let alone) = machine.refreshTokenRotatedStartingSession(nil),
                    alone.current == successor
                else {
                    throw Failure("expected the rotation alone")
                }
            }
        }
        #expect(refusal(action) == .refreshTokenContended)
        let error = EndpointError(.refreshTokenContended)
        #expect(error.status == 503)
        #expect(error.retryAfterSeconds == 1)
        _ = found
    }

    @Test("A state prints its name only, never the code, verifier or token it holds")
    func stateDescription() {
        let code = OpaqueToken.mint(.authorizationCode, using: SeededRandomSource())
        let machine = loadingCode(code)
        let text = "\(machine.state)"
        #expect(text == "loadingCode")
    }

    @Test("A backend failure while starting a refresh's session still returns the credential")
    func sessionFailureAfterRotation() throws {
        let random = SeededRandomSource()
        var (machine, _) = try rotating(.mint(.refreshToken, using: random))
        guard case .rotatingRefreshToken(let rotation) = machine.state else {
            throw Failure("expected a rotation under way")
        }
        let minted = rotation.minted
        guard case .replaceSession = machine.refreshTokenRotated(.rotated) else {
            throw Failure("expected .replaceSession")
        }
        guard case .respond(.success(let credential, let cookie)) = machine.backendFailed(.replaceSession) else {
            throw Failure("expected a success")
        }
        #expect(credential?.refreshToken.digest == minted.refreshToken.digest)
        #expect(cookie == nil)
    }
}

extension ExchangeStateMachineTests {
    /// Every step moves a state and an action; the plans, minted secrets and issuances live in boxes of
    /// their own (`indirect` cases), so a step copies a pointer's worth of them instead of the whole
    /// payload. Before, a state was 640 bytes and an action 472, and copying them was a tenth of an
    /// exchange. A state of more than 128 bytes is copied by a call of `memmove` — the compiler copies
    /// at most eight 16-byte words inline on x86-64 — and an exchange moves its state 26 times: at 129
    /// bytes, while `.loadingCode` held the code's text, that was 26 calls. The largest states now carry
    /// 96 bytes (`.loadingCode`: a digest and two parameters) and 80 (`.checkingCodeAccount`).
    @Test("State and Action stay small: the large payloads are boxed, and a state is copied inline")
    func payloadsAreBoxed() {
        #expect(
            MemoryLayout<ExchangeStateMachine.State>.size <= 128,
            "\(MemoryLayout<ExchangeStateMachine.State>.size)"
        )
        #expect(
            MemoryLayout<ExchangeStateMachine.Action>.size <= 72,
            "\(MemoryLayout<ExchangeStateMachine.Action>.size)"
        )
        // The answer passes eight moves from the machine to the encoder; a success inline was 370 bytes.
        #expect(MemoryLayout<ExchangeOutcome>.size <= 32, "\(MemoryLayout<ExchangeOutcome>.size)")
        // A rotation's outcome passes from the store through the lock and the engine to the machine; with
        // the superseded answer's lookup inline it was 288 bytes, a `memmove` at each pass.
        #expect(MemoryLayout<RefreshRotation>.size <= 16, "\(MemoryLayout<RefreshRotation>.size)")
    }
}

extension ExchangeStateMachineTests {
    @Test("A refresh with a session asks for the rotation and the session in one operation, and sets the cookie")
    func rotationStartingSession() throws {
        let random = SeededRandomSource()
        var (machine, found) = try rotating(.mint(.refreshToken, using: random), together: true)
        guard case .rotatingRefreshToken(let rotation) = machine.state, let sessionID = rotation.minted.session else {
            throw Failure("expected a rotation under way, with a session minted")
        }
        let (plan, minted) = (rotation.plan, rotation.minted)
        guard case .respond(.success(let credential, let cookie)) = machine.refreshTokenRotatedStartingSession(.rotated)
        else {
            throw Failure("expected a success")
        }
        #expect(credential?.refreshToken.digest == minted.refreshToken.digest)
        #expect(credential?.accessToken.digest == minted.accessToken.digest)
        #expect(credential?.expiresIn == Self.now.wholeSeconds(until: plan.accessTokenExpiresAt))
        let expected = SessionCookie(
            session: sessionID,
            maxAge: Self.now.wholeSeconds(
                until: Self.now.adding(
                    EngineConfiguration().lifetimes.studioSession.timeInterval,
                    cappedAt: found.grant.expiresAt
                )
            ),
            configuration: EngineConfiguration().cookie
        )
        #expect(cookie?.headerValue == expected.headerValue)
    }

    @Test("The rotation asked with a session stores the same records as the two operations it stands for")
    func rotationStartingSessionMatchesTwoSteps() throws {
        let token = OpaqueToken.mint(.refreshToken, using: SeededRandomSource())
        // Two machines from the same seed mint the same secrets: one told that its store starts sessions
        // separately, one not.
        var (together, found) = try rotating(token, together: true)
        var (separately, _) = try rotating(token)
        guard case .rotatingRefreshToken(let rotation) = together.state, let sessionID = rotation.minted.session
        else {
            throw Failure("expected a rotation under way")
        }
        let plan = rotation.plan
        let session = StudioSession(
            digest: sessionID.digest,
            grant: plan.grant,
            startedAt: Self.now,
            expiresAt: Self.now.adding(
                EngineConfiguration().lifetimes.studioSession.timeInterval,
                cappedAt: found.grant.expiresAt
            )
        )
        #expect(rotation.startingSession == session)
        #expect(separately.refreshTokenRotated(.rotated) == .replaceSession(session))
        #expect(
            together.refreshTokenRotatedStartingSession(.rotated)
                == separately.sessionReplaced(.replaced(previous: nil))
        )
    }

    @Test(
        "A rotation asked with a session that is refused refuses as a rotation alone does",
        arguments: [(RefreshRotation.grantNotLive, RefusalReason.grantRevoked), (.notFound, .refreshTokenNotFound)]
    )
    func rotationStartingSessionRefused(outcome: RefreshRotation, reason: RefusalReason) throws {
        var (machine, _) = try rotating(.mint(.refreshToken, using: SeededRandomSource()), together: true)
        #expect(refusal(machine.refreshTokenRotatedStartingSession(outcome)) == reason)
    }

    @Test("A backend failure of the rotation asked with a session is a 503 with no credential")
    func rotationStartingSessionFails() throws {
        var (machine, _) = try rotating(.mint(.refreshToken, using: SeededRandomSource()), together: true)
        #expect(refusal(machine.backendFailed(.rotateRefreshToken)) == .backendUnavailable(.rotateRefreshToken))
    }
}
