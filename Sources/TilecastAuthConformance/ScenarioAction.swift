// SPDX-License-Identifier: Apache-2.0

/// One action of a scenario step: what to do, with its parameters as written (variables are substituted
/// when the step runs).
public struct ScenarioAction: Sendable {
    /// The kinds of action, by their key in a step.
    public enum Kind: String, Sendable, CaseIterable {
        case issueCode, insertCode, request, exchange, refresh, concurrent, advanceClock, setClock, revokeGrant
        case revokeAllGrants, signOut, authenticateSession, authenticateBearer, setAccount
        case failNextSessionStart, failNext, createGrant, removeExpired

        /// The parameters the action accepts.
        var allowedParameters: Set<String> {
            switch self {
            case .issueCode: ["account", "client", "redirectUri", "verifier", "challenge", "challengeMethod", "scope"]
            case .insertCode:
                ["account", "client", "redirectUri", "verifier", "challenge", "challengeMethod", "scope", "lifetime"]
            case .request: ["method", "headers", "json", "body", "bodyBase64", "peer"]
            case .exchange:
                ["code", "verifier", "redirectUri", "clientId", "extra", "omit", "method", "headers", "peer"]
            case .refresh: ["refreshToken", "studioSession", "clientId", "extra", "omit", "method", "headers", "peer"]
            case .concurrent: ["count", "request", "exchange", "refresh"]
            case .advanceClock, .setClock: ["seconds"]
            case .revokeGrant: ["accessToken", "refreshToken", "sessionId"]
            case .revokeAllGrants: ["account"]
            case .signOut: ["sessionId", "cookieHeader", "token", "client"]
            case .authenticateSession: ["sessionId", "cookieHeader"]
            case .authenticateBearer: ["accessToken", "authorization"]
            case .setAccount: ["account", "active"]
            case .failNextSessionStart, .removeExpired: []
            case .failNext: ["operation"]
            case .createGrant: ["account", "client", "scope", "session"]
            }
        }

        /// The parameters the action needs.
        var requiredParameters: Set<String> {
            switch self {
            case .exchange: ["code", "verifier"]
            case .refresh: ["refreshToken"]
            case .concurrent: ["count"]
            case .advanceClock, .setClock: ["seconds"]
            case .revokeAllGrants: ["account"]
            case .setAccount: ["account", "active"]
            case .failNext: ["operation"]
            case .createGrant: ["client"]
            case .issueCode, .insertCode, .request, .revokeGrant, .signOut, .authenticateSession,
                .authenticateBearer, .failNextSessionStart, .removeExpired:
                []
            }
        }

        /// Parameter sets of which at most one (`required: false`) or exactly one (`required: true`) may
        /// be given.
        var exclusiveParameters: (names: [String], required: Bool)? {
            switch self {
            case .request: (["json", "body", "bodyBase64"], false)
            case .revokeGrant: (["accessToken", "refreshToken", "sessionId"], true)
            case .signOut: (["sessionId", "cookieHeader", "token"], true)
            case .authenticateSession: (["sessionId", "cookieHeader"], true)
            case .authenticateBearer: (["accessToken", "authorization"], true)
            default: nil
            }
        }

        /// The operations `failNext` accepts.
        static let failableOperations = [
            "accountDirectory", "rateLimiter", "authorizationCode", "redeemCode", "refreshToken", "rotateRefreshToken",
            "replaceSession", "revokeGrant", "revokeGrants", "accessToken", "session", "insertCode", "createGrant",
            "client", "grant", "grants", "removeExpired",
        ]

        /// Whether the action sends endpoint requests, so `expect.json` paths address the response body.
        var isRequest: Bool {
            self == .request || self == .exchange || self == .refresh
        }
    }

    /// What to do.
    public let kind: Kind
    /// Its parameters.
    public let parameters: [String: ScenarioJSON]
}
