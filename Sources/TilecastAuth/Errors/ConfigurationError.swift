// SPDX-License-Identifier: Apache-2.0

/// A configuration the engine refuses, because it is impossible or unsafe.
///
/// A struct with static members rather than an enum, as swift-certificates' `CertificateError` is, so a
/// later release can add a reason without breaking a caller's `switch`. Compare with `==`, or read
/// ``lifetime`` and the allowed range for a lifetime out of range.
public struct ConfigurationError: Error, Hashable, Sendable {
    private enum Base: Hashable, Sendable {
        case invalidCookieName
        case hostPrefixRequiresSecure
        case hostPrefixRequiresRootPath
        case hostPrefixForbidsDomain
        case securePrefixRequiresSecure
        case sameSiteNoneRequiresSecure
        case invalidCookiePath
        case invalidCookieDomain
        case lifetimeOutOfRange(Lifetime, minimum: Duration, maximum: Duration)
        case invalidClientRegistration
        case invalidOrigin(String)
        case bodyLimitOutOfRange
        case ipv6PrefixLengthOutOfRange
    }

    /// A lifetime of the configuration, named.
    public struct Lifetime: Hashable, Sendable, CustomStringConvertible {
        public let description: String

        private init(_ description: String) {
            self.description = description
        }

        /// ``TokenLifetimes/authorizationCode``.
        public static let authorizationCode = Lifetime("authorization code")
        /// ``TokenLifetimes/accessToken``.
        public static let accessToken = Lifetime("access token")
        /// ``TokenLifetimes/refreshTokenIdle``.
        public static let refreshTokenIdle = Lifetime("refresh token idle")
        /// ``TokenLifetimes/refreshTokenAbsolute``.
        public static let refreshTokenAbsolute = Lifetime("refresh token absolute")
        /// ``TokenLifetimes/studioSession``.
        public static let studioSession = Lifetime("Studio session")
        /// ``EngineConfiguration/refreshTokenReuseLeeway``.
        public static let refreshTokenReuseLeeway = Lifetime("refresh token reuse leeway")
    }

    private let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// The cookie name is empty or not an RFC 9110 token.
    public static let invalidCookieName = ConfigurationError(.invalidCookieName)
    /// A `__Host-` cookie must be `Secure` (rfc6265bis §4.1.3.2).
    public static let hostPrefixRequiresSecure = ConfigurationError(.hostPrefixRequiresSecure)
    /// A `__Host-` cookie must have `Path=/` (rfc6265bis §4.1.3.2).
    public static let hostPrefixRequiresRootPath = ConfigurationError(.hostPrefixRequiresRootPath)
    /// A `__Host-` cookie must not have a `Domain` (rfc6265bis §4.1.3.2).
    public static let hostPrefixForbidsDomain = ConfigurationError(.hostPrefixForbidsDomain)
    /// A `__Secure-` cookie must be `Secure` (rfc6265bis §4.1.3.1).
    public static let securePrefixRequiresSecure = ConfigurationError(.securePrefixRequiresSecure)
    /// `SameSite=None` needs `Secure`, or browsers drop the cookie.
    public static let sameSiteNoneRequiresSecure = ConfigurationError(.sameSiteNoneRequiresSecure)
    /// The cookie path must start with `/` and hold no control character or `;`.
    public static let invalidCookiePath = ConfigurationError(.invalidCookiePath)
    /// The cookie domain must be a host name without a leading dot.
    public static let invalidCookieDomain = ConfigurationError(.invalidCookieDomain)
    /// The served client id or callback URI is empty or holds a control character.
    public static let invalidClientRegistration = ConfigurationError(.invalidClientRegistration)
    /// The body limit is outside 1 KiB…1 MiB.
    public static let bodyLimitOutOfRange = ConfigurationError(.bodyLimitOutOfRange)
    /// The rate limiter's IPv6 prefix length is outside 32…64.
    public static let ipv6PrefixLengthOutOfRange = ConfigurationError(.ipv6PrefixLengthOutOfRange)

    /// `lifetime` is outside `minimum` through `maximum`, the range its rule allows.
    public static func lifetimeOutOfRange(
        _ lifetime: Lifetime,
        minimum: Duration,
        maximum: Duration
    ) -> ConfigurationError {
        ConfigurationError(.lifetimeOutOfRange(lifetime, minimum: minimum, maximum: maximum))
    }

    /// An allowed origin is not of the form `scheme://host[:port]`.
    public static func invalidOrigin(_ origin: String) -> ConfigurationError {
        ConfigurationError(.invalidOrigin(origin))
    }

    /// The lifetime out of range, when that is the error.
    public var lifetime: Lifetime? {
        if case .lifetimeOutOfRange(let lifetime, _, _) = base { lifetime } else { nil }
    }
}

extension ConfigurationError: CustomStringConvertible {
    public var description: String {
        switch base {
        case .invalidCookieName: "The cookie name must be a non-empty token (RFC 9110 §5.6.2)."
        case .hostPrefixRequiresSecure: "A __Host- cookie must be Secure (rfc6265bis §4.1.3.2)."
        case .hostPrefixRequiresRootPath: "A __Host- cookie must have Path=/ (rfc6265bis §4.1.3.2)."
        case .hostPrefixForbidsDomain: "A __Host- cookie must not have a Domain (rfc6265bis §4.1.3.2)."
        case .securePrefixRequiresSecure: "A __Secure- cookie must be Secure (rfc6265bis §4.1.3.1)."
        case .sameSiteNoneRequiresSecure: "SameSite=None requires Secure."
        case .invalidCookiePath: "The cookie path must start with / and contain no control character or ;."
        case .invalidCookieDomain: "The cookie domain must be a host name without a leading dot."
        case .lifetimeOutOfRange(let lifetime, let minimum, let maximum):
            "The \(lifetime) lifetime must be from \(Self.seconds(minimum)) to \(Self.seconds(maximum))."
        case .invalidClientRegistration: "The served client id and callback URI must be non-empty and printable."
        case .invalidOrigin(let origin): "\(origin) is not an origin of the form scheme://host[:port]."
        case .bodyLimitOutOfRange: "The body limit must be between 1024 and 1048576 bytes."
        case .ipv6PrefixLengthOutOfRange: "The rate limiter's IPv6 prefix length must be between 32 and 64."
        }
    }

    /// Whole seconds, as `600 s`.
    private static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }
}
