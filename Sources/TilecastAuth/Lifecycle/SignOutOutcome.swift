// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``AuthEngine/signOut(sessionCookieValue:)`` and
/// ``AuthEngine/signOut(token:client:peerAddress:)``.
public enum SignOutOutcome: Hashable, Sendable {
    /// The grant is revoked — now, or earlier — with every token and the session.
    case signedOut(grant: GrantID)
    /// The cookie or token names no live session or grant: malformed, unknown, replaced, expired, or of
    /// another client. Nothing changed.
    case notSignedIn
}
