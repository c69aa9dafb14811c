// SPDX-License-Identifier: Apache-2.0

/// A configuration the engine refuses, because it is impossible or unsafe.
public enum ConfigurationError: Error, Hashable, Sendable {
    /// The cookie name is empty or not an RFC 9110 token.
    case invalidCookieName
    /// A `__Host-` cookie must be `Secure` (rfc6265bis §4.1.3.2).
    case hostPrefixRequiresSecure
    /// A `__Host-` cookie must have `Path=/` (rfc6265bis §4.1.3.2).
    case hostPrefixRequiresRootPath
    /// A `__Host-` cookie must not have a `Domain` (rfc6265bis §4.1.3.2).
    case hostPrefixForbidsDomain
    /// A `__Secure-` cookie must be `Secure` (rfc6265bis §4.1.3.1).
    case securePrefixRequiresSecure
    /// `SameSite=None` needs `Secure`, or browsers drop the cookie.
    case sameSiteNoneRequiresSecure
    /// The cookie path must start with `/` and hold no control character or `;`.
    case invalidCookiePath
    /// The cookie domain must be a host name without a leading dot.
    case invalidCookieDomain
    /// A lifetime is outside the range the named rule allows.
    case lifetimeOutOfRange(name: String, allowed: String)
    /// The served client id or callback URI is empty or holds a control character.
    case invalidClientRegistration
    /// An allowed origin is not of the form `scheme://host[:port]`.
    case invalidOrigin(String)
    /// The body limit is outside 1 KiB…1 MiB.
    case bodyLimitOutOfRange
    /// The rate limiter's IPv6 prefix length is outside 32…64.
    case ipv6PrefixLengthOutOfRange
}

extension ConfigurationError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidCookieName: "The cookie name must be a non-empty token (RFC 9110 §5.6.2)."
        case .hostPrefixRequiresSecure: "A __Host- cookie must be Secure (rfc6265bis §4.1.3.2)."
        case .hostPrefixRequiresRootPath: "A __Host- cookie must have Path=/ (rfc6265bis §4.1.3.2)."
        case .hostPrefixForbidsDomain: "A __Host- cookie must not have a Domain (rfc6265bis §4.1.3.2)."
        case .securePrefixRequiresSecure: "A __Secure- cookie must be Secure (rfc6265bis §4.1.3.1)."
        case .sameSiteNoneRequiresSecure: "SameSite=None requires Secure."
        case .invalidCookiePath: "The cookie path must start with / and contain no control character or ;."
        case .invalidCookieDomain: "The cookie domain must be a host name without a leading dot."
        case .lifetimeOutOfRange(let name, let allowed): "The \(name) lifetime must be \(allowed)."
        case .invalidClientRegistration: "The served client id and callback URI must be non-empty and printable."
        case .invalidOrigin(let origin): "\(origin) is not an origin of the form scheme://host[:port]."
        case .bodyLimitOutOfRange: "The body limit must be between 1024 and 1048576 bytes."
        case .ipv6PrefixLengthOutOfRange: "The rate limiter's IPv6 prefix length must be between 32 and 64."
        }
    }
}
