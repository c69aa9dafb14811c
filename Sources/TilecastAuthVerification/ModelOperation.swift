// SPDX-License-Identifier: Apache-2.0

/// One operation of a model-based test sequence.
///
/// Operations name the things they act on by age — 0 is the newest of its kind the sequence has issued
/// so far, 1 the one before, and so on, modulo the count — never by value, so a sequence replays
/// identically from scratch and still makes sense after the shrinker removes operations from it.
public enum ModelOperation: Sendable, Hashable {
    /// How an exchange or refresh request is formed.
    public enum Variant: String, Sendable, Hashable, CaseIterable {
        /// A well-formed request with the right verifier, callback and client.
        case valid
        /// The verifier of another code.
        case wrongVerifier
        /// A verifier that is not 43–128 unreserved characters.
        case malformedVerifier
        /// A redirect URI other than the callback.
        case wrongRedirect
        /// `client_id` other than the served client.
        case wrongClient
        /// A value that was never issued.
        case unknown
    }

    /// The authorize step: a code for `account` (0 or 1), to the iOS client or, if `forWeb`, the web client.
    case issueCode(account: Int, forWeb: Bool)
    /// Exchanges an issued code (`code` 0: the newest unredeemed one; otherwise by age, reaching replays).
    case exchange(code: Int, variant: Variant)
    /// Refreshes with a refresh token (`token` 0: the newest current one; otherwise by age among all ever
    /// issued, reaching reuse).
    case refresh(token: Int, studioSession: Bool?, variant: Variant)
    /// Sends `count` identical valid exchanges of one code at once.
    case concurrentExchange(code: Int, count: Int)
    /// Sends `count` identical refreshes of one token at once.
    case concurrentRefresh(token: Int, count: Int, studioSession: Bool)
    /// Revokes a grant (`grant` 0: the newest).
    case revokeGrant(grant: Int)
    /// Signs out with a session id ever issued (`session` 0: the newest).
    case signOut(session: Int)
    /// Signs the app out with a refresh token (`token` 0: the newest).
    case signOutWithToken(token: Int)
    /// Makes `account` active or inactive.
    case setAccount(account: Int, active: Bool)
    /// Moves the clock.
    case advanceClock(seconds: Double)
    /// Makes the next Studio session start fail.
    case failNextSessionStart
    /// Creates a grant for the web client, whose refresh token the iOS endpoint must refuse.
    case createWebGrant(account: Int)
    /// Removes expired records from the store.
    case removeExpired
}

extension ModelOperation: CustomStringConvertible {
    public var description: String {
        switch self {
        case .issueCode(let account, let forWeb): "issueCode(account: \(account)\(forWeb ? ", web" : ""))"
        case .exchange(let code, let variant): "exchange(code: \(code), \(variant.rawValue))"
        case .refresh(let token, let studioSession, let variant):
            "refresh(token: \(token), studio_session: \(studioSession.map(String.init) ?? "absent"), \(variant.rawValue))"
        case .concurrentExchange(let code, let count): "concurrentExchange(code: \(code), ×\(count))"
        case .concurrentRefresh(let token, let count, let studioSession):
            "concurrentRefresh(token: \(token), ×\(count), studio_session: \(studioSession))"
        case .revokeGrant(let grant): "revokeGrant(grant: \(grant))"
        case .signOut(let session): "signOut(session: \(session))"
        case .signOutWithToken(let token): "signOutWithToken(token: \(token))"
        case .setAccount(let account, let active): "setAccount(\(account), active: \(active))"
        case .advanceClock(let seconds): "advanceClock(\(seconds) s)"
        case .failNextSessionStart: "failNextSessionStart"
        case .createWebGrant(let account): "createWebGrant(account: \(account))"
        case .removeExpired: "removeExpired"
        }
    }
}
