// SPDX-License-Identifier: Apache-2.0

/// Why a session cookie or access token does not authenticate. Tell the client only that it is not
/// authenticated; the reason is for the server's logs.
public enum AuthenticationFailure: Hashable, Sendable {
    /// Nothing was presented.
    case missing
    /// More than one session cookie or `Authorization` field was presented.
    case ambiguous
    /// The value cannot be a session id or access token, or the `Authorization` scheme is not `Bearer`.
    case malformed
    /// No session or token has this value — it never existed, was replaced or was removed.
    case notFound
    /// The session or token has expired, or its grant has.
    case expired
    /// The grant was revoked.
    case revoked
    /// The account is no longer active.
    case accountInactive
}
