// SPDX-License-Identifier: Apache-2.0

/// Something a server may want to log, count or alert on. Events carry ids, never secrets; events raised
/// by a request carry the request's peer address, so an alert can be traced to its source.
///
/// A struct rather than an enum, so a later release can raise a new kind of event without breaking a
/// caller's `switch`: read ``kind`` and the members that kind fills in, and create events with the
/// static functions, which read as the cases of an enum would.
public struct SecurityEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        public let description: String

        private init(_ name: String) {
            self.description = name
        }

        /// A code exchange created a grant: ``grant``, ``client``, ``account``.
        public static let grantCreated = Kind("grantCreated")
        /// A refresh rotated the grant's refresh token: ``grant``.
        public static let refreshTokenRotated = Kind("refreshTokenRotated")
        /// A Studio session started for a grant: ``grant``.
        public static let sessionStarted = Kind("sessionStarted")
        /// A used code came back with valid proof; the grant issued from it is revoked: ``grant``,
        /// ``peerAddress``.
        public static let codeReplayDetected = Kind("codeReplayDetected")
        /// A rotated refresh token came back; its grant is revoked: ``grant``, ``peerAddress``.
        public static let refreshTokenReuseDetected = Kind("refreshTokenReuseDetected")
        /// A grant was revoked, with everything hanging off it: ``grant``, ``revocationReason``.
        public static let grantRevoked = Kind("grantRevoked")
        /// A peer made too many attempts: ``rateLimitKey``, ``retryAfterSeconds``.
        public static let rateLimited = Kind("rateLimited")
        /// A refresh with `studio_session: true` rotated the token but could not start the session; the
        /// response carried the credential with `authenticated: false`: ``grant``.
        public static let sessionStartFailed = Kind("sessionStartFailed")
        /// A backend call failed: ``backendOperation``, ``backendError`` (from the store, directory or
        /// limiter, which see digests only).
        public static let backendFailed = Kind("backendFailed")
        /// The endpoint refused a request: ``refusal``, ``peerAddress``.
        public static let requestRefused = Kind("requestRefused")
        /// ``SamplingSecurityEventObserver`` held back ``suppressedCount`` events of ``suppressedKind`` in
        /// one window — a flood of refusals, rate limiting or backend failures — after passing the first.
        public static let eventsSuppressed = Kind("eventsSuppressed")
    }

    /// What happened.
    public let kind: Kind
    /// The grant it happened to.
    public private(set) var grant: GrantID?
    /// The client of a created grant.
    public private(set) var client: ClientID?
    /// The account of a created grant.
    public private(set) var account: AccountID?
    /// The trusted peer address of the request that raised it, when a request did.
    public private(set) var peerAddress: String?
    /// Why a grant was revoked.
    public private(set) var revocationReason: RevocationReason?
    /// The key a rate-limited request was counted against.
    public private(set) var rateLimitKey: RateLimitKey?
    /// The seconds a rate-limited peer is told to wait.
    public private(set) var retryAfterSeconds: Int?
    /// The backend call that failed.
    public private(set) var backendOperation: BackendOperation?
    /// The backend's error.
    public private(set) var backendError: (any Error)?
    /// The refusal, with its reason.
    public private(set) var refusal: EndpointError?
    /// The sampling kind of the events held back (``SamplingSecurityEventObserver``).
    public private(set) var suppressedKind: String?
    /// How many events were held back.
    public private(set) var suppressedCount: Int?

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// A code exchange created a grant.
    public static func grantCreated(grant: GrantID, client: ClientID, account: AccountID) -> SecurityEvent {
        var event = SecurityEvent(.grantCreated)
        (event.grant, event.client, event.account) = (grant, client, account)
        return event
    }

    /// A refresh rotated the grant's refresh token.
    public static func refreshTokenRotated(grant: GrantID) -> SecurityEvent {
        var event = SecurityEvent(.refreshTokenRotated)
        event.grant = grant
        return event
    }

    /// A Studio session started for a grant.
    public static func sessionStarted(grant: GrantID) -> SecurityEvent {
        var event = SecurityEvent(.sessionStarted)
        event.grant = grant
        return event
    }

    /// A used code came back with valid proof; the grant issued from it is revoked.
    public static func codeReplayDetected(grant: GrantID, peerAddress: String?) -> SecurityEvent {
        var event = SecurityEvent(.codeReplayDetected)
        (event.grant, event.peerAddress) = (grant, peerAddress)
        return event
    }

    /// A rotated refresh token came back; its grant is revoked.
    public static func refreshTokenReuseDetected(grant: GrantID, peerAddress: String?) -> SecurityEvent {
        var event = SecurityEvent(.refreshTokenReuseDetected)
        (event.grant, event.peerAddress) = (grant, peerAddress)
        return event
    }

    /// A grant was revoked, with everything hanging off it.
    public static func grantRevoked(grant: GrantID, reason: RevocationReason) -> SecurityEvent {
        var event = SecurityEvent(.grantRevoked)
        (event.grant, event.revocationReason) = (grant, reason)
        return event
    }

    /// A peer made too many attempts.
    public static func rateLimited(key: RateLimitKey, retryAfterSeconds: Int) -> SecurityEvent {
        var event = SecurityEvent(.rateLimited)
        (event.rateLimitKey, event.retryAfterSeconds) = (key, retryAfterSeconds)
        return event
    }

    /// A refresh with `studio_session: true` rotated the token but could not start the session.
    public static func sessionStartFailed(grant: GrantID) -> SecurityEvent {
        var event = SecurityEvent(.sessionStartFailed)
        event.grant = grant
        return event
    }

    /// A backend call failed.
    public static func backendFailed(operation: BackendOperation, error: any Error) -> SecurityEvent {
        var event = SecurityEvent(.backendFailed)
        (event.backendOperation, event.backendError) = (operation, error)
        return event
    }

    /// The endpoint refused a request.
    public static func requestRefused(_ refusal: EndpointError, peerAddress: String?) -> SecurityEvent {
        var event = SecurityEvent(.requestRefused)
        (event.refusal, event.peerAddress) = (refusal, peerAddress)
        return event
    }

    /// Events of one sampling kind held back in one window.
    public static func eventsSuppressed(kind: String, count: Int) -> SecurityEvent {
        var event = SecurityEvent(.eventsSuppressed)
        (event.suppressedKind, event.suppressedCount) = (kind, count)
        return event
    }

    /// The kind and the members it fills in, for a log line: `refreshTokenReuseDetected grant=… peer=…`.
    public var description: String {
        var parts = [kind.description]
        if let grant { parts.append("grant=\(grant)") }
        if let client { parts.append("client=\(client)") }
        if let account { parts.append("account=\(account)") }
        if let revocationReason { parts.append("reason=\(revocationReason)") }
        if let rateLimitKey { parts.append("key=\(rateLimitKey)") }
        if let retryAfterSeconds { parts.append("retryAfter=\(retryAfterSeconds)") }
        if let backendOperation { parts.append("operation=\(backendOperation)") }
        if let backendError { parts.append("error=\(backendError)") }
        if let refusal { parts.append("refusal=\(refusal)") }
        if let suppressedKind { parts.append("suppressed=\(suppressedKind)") }
        if let suppressedCount { parts.append("count=\(suppressedCount)") }
        if let peerAddress { parts.append("peer=\(peerAddress)") }
        return parts.joined(separator: " ")
    }
}
