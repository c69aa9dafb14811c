// SPDX-License-Identifier: Apache-2.0

/// One action of a scenario step: what to do, with its parameters as written (variables are substituted
/// when the step runs).
public struct ScenarioAction: Sendable {
    /// The kinds of action, by their key in a step.
    public enum Kind: String, Sendable, CaseIterable {
        case issueCode, insertCode, request, exchange, refresh, concurrent, advanceClock, setClock, revokeGrant
        case revokeAllGrants, signOut, authenticateSession, authenticateBearer, setAccount
        case failNextSessionStart, failNext, createGrant, removeExpired, serveClient

        /// The parameters the action accepts.
        var allowedParameters: Set<String> {
            switch self {
            case .request: ["method", "headers", "json", "body", "bodyBase64", "peer"]
            case .exchange:
                ["code", "verifier", "redirectUri", "clientId", "extra", "omit", "method", "headers", "peer"]
            case .refresh: ["refreshToken", "studioSession", "clientId", "extra", "omit", "method", "headers", "peer"]
            case .concurrent: ["count", "request", "exchange", "refresh"]
            default: operation?.parameters ?? []
            }
        }

        /// The control operation that performs the action; `nil` for the endpoint requests the runner
        /// sends itself.
        public var operation: ConformanceOperation? {
            ConformanceOperation(rawValue: rawValue)
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
            case .serveClient: ["client", "callbackUri"]
            default: []
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
