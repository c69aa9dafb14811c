// SPDX-License-Identifier: Apache-2.0

/// What the endpoint answers, before it is rendered as HTTP.
///
/// A success's payload is boxed (`indirect`): with its two tokens and the cookie's settings it was 370
/// bytes, moved whole at each of the eight places an answer passes from the machine to the encoder.
/// Boxed, the outcome is a refusal's size, and each move copies a reference.
enum ExchangeOutcome: Sendable {
    /// 200: the credential (unless the server issues none) and the session cookie when one started.
    indirect case success(credential: IssuedCredential?, cookie: SessionCookie?)
    /// 200 for a refresh that started no session: the credential is the rotation's — its two new tokens,
    /// its access token's lifetime, its grant's scope — read where the rotation holds them
    /// (``PlannedRotation/accessTokenExpiresIn``). The rotation is the object the machine already made
    /// for the store, so the answer needs no box of its own, and nothing is copied out of one.
    case rotated(PlannedRotation)
    /// 200 for a code exchange: the credential and the session cookie are the redemption's, read where it
    /// holds them (``PlannedRedemption/credential``, ``PlannedRedemption/cookie``), as for a rotation.
    case redeemed(PlannedRedemption)
    /// An error response.
    case refused(EndpointError)
}
