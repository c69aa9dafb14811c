// SPDX-License-Identifier: Apache-2.0

/// The answer to a session-cookie or bearer-token authentication.
public enum Authentication: Hashable, Sendable {
    /// The cookie or token is valid.
    case authenticated(AuthenticatedGrant)
    /// It is not.
    case unauthenticated(AuthenticationFailure)
}
