// SPDX-License-Identifier: Apache-2.0

/// What the endpoint answers, before it is rendered as HTTP.
enum ExchangeOutcome: Sendable {
    /// 200: the credential (unless the server issues none) and the session cookie when one started.
    case success(credential: IssuedCredential?, cookie: SessionCookie?)
    /// An error response.
    case refused(EndpointError)
}
