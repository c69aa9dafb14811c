// SPDX-License-Identifier: Apache-2.0

/// The operations of the control API (`Docs/Conformance/ControlAPI.md`) besides `reset`: everything a
/// scenario does that is not a request to the endpoint.
///
/// Each but `inspect` is the scenario action of the same name, with the same parameters and the same
/// result document.
public enum ConformanceOperation: String, Sendable, CaseIterable {
    case issueCode, insertCode, advanceClock, setClock, revokeGrant, revokeAllGrants, signOut
    case authenticateSession, authenticateBearer, setAccount, failNextSessionStart, failNext, createGrant
    case removeExpired, serveClient
    /// Every stored record and every security event as text, for `storeUnchanged` and
    /// `secretsProtected`.
    case inspect

    /// The parameters it accepts.
    public var parameters: Set<String> {
        switch self {
        case .issueCode: ["account", "client", "redirectUri", "verifier", "challenge", "challengeMethod", "scope"]
        case .insertCode:
            ["account", "client", "redirectUri", "verifier", "challenge", "challengeMethod", "scope", "lifetime"]
        case .advanceClock, .setClock: ["seconds"]
        case .revokeGrant: ["accessToken", "refreshToken", "sessionId"]
        case .revokeAllGrants: ["account"]
        case .signOut: ["sessionId", "cookieHeader", "token", "client"]
        case .authenticateSession: ["sessionId", "cookieHeader"]
        case .authenticateBearer: ["accessToken", "authorization"]
        case .setAccount: ["account", "active"]
        case .failNextSessionStart, .removeExpired, .inspect: []
        case .failNext: ["operation"]
        case .createGrant: ["account", "client", "scope", "session"]
        case .serveClient: ["client", "callbackUri"]
        }
    }

    /// The backend operations `failNext` can fail: the rate limiter, the account directory and the
    /// store operations some action calls.
    public static let failableOperations = [
        "rateLimiter", "accountDirectory", "client", "insertCode", "authorizationCode", "redeemCode", "createGrant",
        "refreshToken", "rotateRefreshToken", "replaceSession", "revokeGrant", "revokeGrants", "accessToken",
        "session", "removeExpired",
    ]
}
