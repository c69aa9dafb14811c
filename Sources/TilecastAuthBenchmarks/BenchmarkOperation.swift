// SPDX-License-Identifier: Apache-2.0

/// An operation the benchmark measures, always through the public API with the real HTTP-level work.
public enum BenchmarkOperation: String, Sendable, CaseIterable {
    /// `handle(request:)`: a PKCE code exchange — parse, verify, redeem, mint, store, encode, cookie.
    case codeExchange = "code_exchange"
    /// `handle(request:)`: a refresh without `studio_session`.
    case refresh
    /// `handle(request:)`: a refresh with `studio_session: true`, which also starts a session.
    case refreshWithSession = "refresh_with_session"
    /// `authenticateSession(headers:)` with a `Cookie` field.
    case sessionAuthentication = "session_authentication"
    /// `authenticateBearer(headers:)` with an `Authorization` field.
    case bearerAuthentication = "bearer_authentication"
    /// `handle(request:)`: an exchange refused for a wrong verifier.
    case refusedExchange = "refused_exchange"
}
