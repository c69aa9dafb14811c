// SPDX-License-Identifier: Apache-2.0

/// Something a server may want to log, count or alert on. Events carry ids, never secrets; events raised
/// by a request carry the request's peer address, so an alert can be traced to its source.
public enum SecurityEvent: Sendable {
    /// A code exchange created a grant.
    case grantCreated(grant: GrantID, client: ClientID, account: AccountID)
    /// A refresh rotated the grant's refresh token.
    case refreshTokenRotated(grant: GrantID)
    /// A Studio session started for a grant.
    case sessionStarted(grant: GrantID)
    /// A used code came back with valid proof; the grant issued from it is revoked.
    case codeReplayDetected(grant: GrantID, peerAddress: String?)
    /// A rotated refresh token came back; its grant is revoked.
    case refreshTokenReuseDetected(grant: GrantID, peerAddress: String?)
    /// A grant was revoked, with everything hanging off it.
    case grantRevoked(grant: GrantID, reason: RevocationReason)
    /// A peer made too many attempts.
    case rateLimited(key: RateLimitKey, retryAfterSeconds: Int)
    /// A refresh with `studio_session: true` rotated the token but could not start the session; the
    /// response carried the credential with `authenticated: false`.
    case sessionStartFailed(grant: GrantID)
    /// A backend call failed. The error comes from the store, directory or limiter, which see digests
    /// only.
    case backendFailed(operation: BackendOperation, error: any Error)
    /// The endpoint refused a request.
    case requestRefused(EndpointError, peerAddress: String?)
    /// ``SamplingSecurityEventObserver`` held back `count` events of `kind` in one window — a flood of
    /// refusals, rate limiting or backend failures — after passing on the first.
    case eventsSuppressed(kind: String, count: Int)
}
