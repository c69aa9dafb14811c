// SPDX-License-Identifier: Apache-2.0

/// How long codes, tokens and sessions live.
///
/// Defaults: a 60-second code (node-oidc-provider's default; RFC 6749 §4.1.2 recommends at most ten
/// minutes), a 15-minute access token, a refresh token that dies after 30 idle days and in any case one
/// year after sign-in (RFC 9700 §4.14.2: refresh tokens "SHOULD expire if the client has been inactive
/// for some time"), and a 14-day Studio session.
public struct TokenLifetimes: Hashable, Sendable {
    /// An authorization code's lifetime: 1 second to 10 minutes.
    public var authorizationCode: Duration
    /// An access token's lifetime: 1 second to 24 hours. Never beyond the grant's absolute expiry.
    public var accessToken: Duration
    /// A refresh token's idle lifetime: from issue to expiry if unused. Each rotation starts a new one,
    /// but never beyond the absolute lifetime.
    public var refreshTokenIdle: Duration
    /// The refresh-token lineage's absolute lifetime, and so the lifetime of a grant that issues a native
    /// credential: from sign-in to the end of every token and session of the grant. Rotation never
    /// extends it. At least the idle lifetime, at most ten years.
    ///
    /// A grant without a native credential (``EngineConfiguration/issuesNativeCredential`` off) has no
    /// refresh token, and lives as long as its Studio session, ``studioSession``; this lifetime does not
    /// apply to it.
    public var refreshTokenAbsolute: Duration
    /// A Studio session's lifetime, which is also the cookie's `Max-Age`: 1 second to 400 days
    /// (rfc6265bis §5.5). Never beyond the grant's absolute expiry.
    public var studioSession: Duration

    public init(
        authorizationCode: Duration = .seconds(60),
        accessToken: Duration = .seconds(15 * 60),
        refreshTokenIdle: Duration = .seconds(30 * 86_400),
        refreshTokenAbsolute: Duration = .seconds(365 * 86_400),
        studioSession: Duration = .seconds(14 * 86_400)
    ) {
        self.authorizationCode = authorizationCode
        self.accessToken = accessToken
        self.refreshTokenIdle = refreshTokenIdle
        self.refreshTokenAbsolute = refreshTokenAbsolute
        self.studioSession = studioSession
    }

    /// The largest cookie lifetime user agents honour: 400 days (rfc6265bis §5.5).
    public static let maximumCookieAge: Duration = .seconds(34_560_000)

    /// The longest an authorization code may live: ten minutes (RFC 6749 §4.1.2). A store keeps the
    /// record of an account-wide revocation this long (``GrantStore/revokeGrants(of:reason:at:)``).
    public static let maximumAuthorizationCode: Duration = .seconds(600)

    /// Throws when a lifetime is outside its range.
    public func validate() throws(ConfigurationError) {
        try Self.check(authorizationCode, .authorizationCode, .seconds(1), Self.maximumAuthorizationCode)
        try Self.check(accessToken, .accessToken, .seconds(1), .seconds(86_400))
        try Self.check(refreshTokenIdle, .refreshTokenIdle, .seconds(1), refreshTokenAbsolute)
        try Self.check(refreshTokenAbsolute, .refreshTokenAbsolute, refreshTokenIdle, .seconds(10 * 366 * 86_400))
        try Self.check(studioSession, .studioSession, .seconds(1), Self.maximumCookieAge)
    }

    private static func check(
        _ value: Duration,
        _ lifetime: ConfigurationError.Lifetime,
        _ minimum: Duration,
        _ maximum: Duration
    ) throws(ConfigurationError) {
        guard value >= minimum, value <= maximum else {
            throw .lifetimeOutOfRange(lifetime, minimum: minimum, maximum: maximum)
        }
    }
}
