// SPDX-License-Identifier: Apache-2.0

/// Why a session cookie or access token does not authenticate. Tell the client only that it is not
/// authenticated; the reason is for the server's logs.
///
/// A struct with static members rather than an enum, so a later release can tell a new reason apart
/// without breaking a caller's `switch`; compare with `==`. Its ``description`` is the reason's name
/// (`revoked`), as the conformance scenarios spell it.
public struct AuthenticationFailure: Hashable, Sendable, CustomStringConvertible {
    public let description: String

    private init(_ name: String) {
        self.description = name
    }

    /// Nothing was presented.
    public static let missing = AuthenticationFailure("missing")
    /// More than one session cookie or `Authorization` field was presented.
    public static let ambiguous = AuthenticationFailure("ambiguous")
    /// The value cannot be a session id or access token, or the `Authorization` scheme is not `Bearer`.
    public static let malformed = AuthenticationFailure("malformed")
    /// No session or token has this value — it never existed, was replaced or was removed.
    public static let notFound = AuthenticationFailure("notFound")
    /// The session or token has expired, or its grant has.
    public static let expired = AuthenticationFailure("expired")
    /// The grant was revoked.
    public static let revoked = AuthenticationFailure("revoked")
    /// The account is no longer active.
    public static let accountInactive = AuthenticationFailure("accountInactive")
}
