// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``IOSSessionEngine/signOut(sessionCookieValue:)``.
public enum SignOutOutcome: Hashable, Sendable {
    /// The session's grant is revoked — now, or earlier — with every token and the session.
    case signedOut(grant: GrantID)
    /// The cookie names no live session: malformed, unknown, replaced or expired. Nothing changed.
    case noSession
}
