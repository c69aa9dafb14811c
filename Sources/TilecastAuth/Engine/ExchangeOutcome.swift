// SPDX-License-Identifier: Apache-2.0

/// What the endpoint answers, before it is rendered as HTTP.
///
/// A success's payload is boxed (`indirect`): with its two tokens and the cookie's settings it was 370
/// bytes, moved whole at each of the eight places an answer passes from the machine to the encoder.
/// Boxed, the outcome is a refusal's size, and each move copies a reference.
enum ExchangeOutcome: Sendable {
    /// 200: the credential (unless the server issues none) and the session cookie when one started.
    indirect case success(credential: IssuedCredential?, cookie: SessionCookie?)
    /// An error response.
    case refused(EndpointError)
}
