// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// A small reference model of codes, grants, refresh-token lineages and Studio sessions, written straight
/// from `Docs/Specification.md` with none of the engine's machinery: plain arrays, plain rules.
///
/// It predicts what each request must answer and keeps the state that follows. Values the engine mints
/// (tokens, session ids, grant ids) are learned from the engine's responses.
struct ReferenceModel {
    enum TokenState: Equatable {
        case active
        case rotated(at: Double, successor: Int)
        case retired
    }

    struct Code {
        var value: String
        var verifier: String
        var account: Int
        var forWeb: Bool
        var issuedAt: Double
        var redeemedInto: Int?
    }

    struct GrantRecord {
        var engineID: GrantID
        var account: Int
        var forWeb: Bool
        var expiresAt: Double
        var revoked = false
        var currentRefreshToken: Int?
        var session: Int?
    }

    struct RefreshTokenRecord {
        var value: String
        var grant: Int
        var expiresAt: Double
        var state: TokenState = .active
    }

    struct SessionRecord {
        var value: String
        var grant: Int
        var expiresAt: Double
    }

    struct AccessTokenRecord {
        var value: String
        var grant: Int
        var expiresAt: Double
    }

    /// What a request must answer.
    struct Answer: Equatable, CustomStringConvertible {
        var status: Int
        var error: String?
        /// For a 200: whether `authenticated` is true — and so whether there is exactly one `Set-Cookie`.
        var authenticated: Bool?

        static func refused(_ status: Int, _ error: String) -> Answer { Answer(status: status, error: error) }
        static func success(authenticated: Bool) -> Answer { Answer(status: 200, authenticated: authenticated) }

        var description: String {
            status == 200 ? "200 authenticated: \(authenticated == true)" : "\(status) \(error ?? "")"
        }
    }

    /// What a refresh will do if it succeeds.
    struct RefreshPlan {
        var presented: Int
        var current: Int
        var startsSession: Bool
    }

    static let codeLifetime = 60.0
    static let accessTokenLifetime = 900.0
    static let refreshTokenIdle = 30 * 86_400.0
    static let grantLifetime = 365 * 86_400.0
    static let sessionLifetime = 14 * 86_400.0

    let leeway: Double
    var now: Double
    var codes: [Code] = []
    var grants: [GrantRecord] = []
    var refreshTokens: [RefreshTokenRecord] = []
    var sessions: [SessionRecord] = []
    var accessTokens: [AccessTokenRecord] = []
    var inactiveAccounts: Set<Int> = []
    /// Session starts that will fail, one each.
    var pendingSessionFailures = 0

    init(now: Double, leeway: Double) {
        self.now = now
        self.leeway = leeway
    }

    func isLive(_ grant: Int) -> Bool {
        !grants[grant].revoked && now < grants[grant].expiresAt
    }

    // MARK: Exchange

    /// The answer to an exchange of `code` (nil: an unknown code) formed as `variant`, and the grant it
    /// revokes, if it is a replay.
    func expectExchange(code index: Int?, variant: ModelOperation.Variant) -> (Answer, revokes: Int?) {
        switch variant {
        case .malformedVerifier: return (.refused(400, "invalid_request"), nil)
        case .wrongClient: return (.refused(400, "invalid_client"), nil)
        case .wrongRedirect, .unknown, .wrongVerifier: return (.refused(400, "invalid_grant"), nil)
        case .valid: break
        }
        guard let index else { return (.refused(400, "invalid_grant"), nil) }
        let code = codes[index]
        if code.forWeb { return (.refused(400, "invalid_grant"), nil) }
        if let grant = code.redeemedInto {
            return (.refused(400, "invalid_grant"), isLive(grant) ? grant : nil)
        }
        if now >= code.issuedAt + Self.codeLifetime { return (.refused(400, "invalid_grant"), nil) }
        if inactiveAccounts.contains(code.account) { return (.refused(403, "access_denied"), nil) }
        if pendingSessionFailures > 0 { return (.refused(503, "temporarily_unavailable"), nil) }
        return (.success(authenticated: true), nil)
    }

    /// Records a successful exchange: the grant and everything it starts with.
    mutating func redeem(code index: Int, engineID: GrantID, accessToken: String, refreshToken: String, session: String)
    {
        let grant = grants.count
        let expiresAt = now + Self.grantLifetime
        grants.append(
            GrantRecord(engineID: engineID, account: codes[index].account, forWeb: false, expiresAt: expiresAt)
        )
        codes[index].redeemedInto = grant
        addTokens(grant: grant, accessToken: accessToken, refreshToken: refreshToken)
        sessions.append(
            SessionRecord(value: session, grant: grant, expiresAt: min(now + Self.sessionLifetime, expiresAt))
        )
        grants[grant].session = sessions.count - 1
    }

    /// Records a grant created for the web client.
    mutating func createWebGrant(account: Int, engineID: GrantID, accessToken: String, refreshToken: String) {
        grants.append(
            GrantRecord(engineID: engineID, account: account, forWeb: true, expiresAt: now + Self.grantLifetime)
        )
        addTokens(grant: grants.count - 1, accessToken: accessToken, refreshToken: refreshToken)
    }

    private mutating func addTokens(grant: Int, accessToken: String, refreshToken: String) {
        let cap = grants[grant].expiresAt
        accessTokens.append(
            AccessTokenRecord(value: accessToken, grant: grant, expiresAt: min(now + Self.accessTokenLifetime, cap))
        )
        refreshTokens.append(
            RefreshTokenRecord(value: refreshToken, grant: grant, expiresAt: min(now + Self.refreshTokenIdle, cap))
        )
        grants[grant].currentRefreshToken = refreshTokens.count - 1
    }

    // MARK: Refresh

    /// The answer to a refresh with `token` (nil: an unknown token), the grant it revokes if the token
    /// was reused, and what happens if it succeeds.
    func expectRefresh(
        token index: Int?,
        studioSession: Bool?,
        variant: ModelOperation.Variant
    )
        -> (Answer, revokes: Int?, plan: RefreshPlan?)
    {
        if variant == .wrongClient { return (.refused(400, "invalid_client"), nil, nil) }
        guard let index, variant != .unknown else { return (.refused(400, "invalid_grant"), nil, nil) }
        let token = refreshTokens[index]
        let grant = grants[token.grant]
        if grant.forWeb || grant.revoked { return (.refused(400, "invalid_grant"), nil, nil) }
        if now >= token.expiresAt || grant.expiresAt - now < 1 { return (.refused(400, "invalid_grant"), nil, nil) }
        var current = index
        switch token.state {
        case .active:
            break
        case .rotated(let at, let successor):
            guard leeway > 0, abs(now - at) < leeway, grant.currentRefreshToken == successor else {
                return (.refused(400, "invalid_grant"), token.grant, nil)
            }
            current = successor
        case .retired:
            return (.refused(400, "invalid_grant"), token.grant, nil)
        }
        if inactiveAccounts.contains(grant.account) { return (.refused(403, "access_denied"), nil, nil) }
        let startsSession = studioSession == true && pendingSessionFailures == 0
        return (
            .success(authenticated: startsSession), nil,
            RefreshPlan(presented: index, current: current, startsSession: startsSession)
        )
    }

    /// Records a successful refresh.
    mutating func rotate(
        _ plan: RefreshPlan,
        studioSession: Bool?,
        accessToken: String,
        refreshToken: String,
        session: String?
    ) {
        let grant = refreshTokens[plan.presented].grant
        let cap = grants[grant].expiresAt
        refreshTokens.append(
            RefreshTokenRecord(value: refreshToken, grant: grant, expiresAt: min(now + Self.refreshTokenIdle, cap))
        )
        let successor = refreshTokens.count - 1
        if plan.presented == plan.current {
            refreshTokens[plan.presented].state = .rotated(at: now, successor: successor)
        } else {
            guard case .rotated(let at, _) = refreshTokens[plan.presented].state else {
                preconditionFailure("leeway without rotation")
            }
            refreshTokens[plan.presented].state = .rotated(at: at, successor: successor)
            refreshTokens[plan.current].state = .retired
        }
        grants[grant].currentRefreshToken = successor
        accessTokens.append(
            AccessTokenRecord(value: accessToken, grant: grant, expiresAt: min(now + Self.accessTokenLifetime, cap))
        )
        if studioSession == true {
            if let session {
                sessions.append(
                    SessionRecord(value: session, grant: grant, expiresAt: min(now + Self.sessionLifetime, cap))
                )
                grants[grant].session = sessions.count - 1
            } else {
                pendingSessionFailures -= 1
            }
        }
    }

    // MARK: Revocation and sign-out

    /// Revokes `grant` as the engine's `revokeGrant` does; returns the outcome's name.
    mutating func revoke(_ grant: Int) -> String {
        guard now < grants[grant].expiresAt else { return "notFound" }
        guard !grants[grant].revoked else { return "alreadyRevoked" }
        grants[grant].revoked = true
        return "revoked"
    }

    /// Signs out with the `index`-th session id; returns whether a grant was signed out.
    mutating func signOut(session index: Int) -> Bool {
        let session = sessions[index]
        guard grants[session.grant].session == index, now < session.expiresAt else { return false }
        return revoke(session.grant) != "notFound"
    }

    /// Signs the app out with the `index`-th refresh token; returns whether a grant was signed out.
    mutating func signOut(refreshToken index: Int) -> Bool {
        let token = refreshTokens[index]
        guard !grants[token.grant].forWeb, now < token.expiresAt else { return false }
        return revoke(token.grant) != "notFound"
    }

    // MARK: Authentication

    /// Whether the `index`-th session id must authenticate now.
    func sessionAuthenticates(_ index: Int) -> Bool {
        let session = sessions[index]
        let grant = grants[session.grant]
        return grant.session == index && now < session.expiresAt && isLive(session.grant)
            && !inactiveAccounts.contains(grant.account)
    }

    /// Whether the `index`-th access token must authenticate now.
    func accessTokenAuthenticates(_ index: Int) -> Bool {
        let token = accessTokens[index]
        return now < token.expiresAt && isLive(token.grant) && !inactiveAccounts.contains(grants[token.grant].account)
    }
}
