// SPDX-License-Identifier: Apache-2.0

/// Everything about the endpoint a server may choose.
///
/// The defaults are the production Tilecast endpoint: client `tilecast-ios`, callback
/// `tilecast-ios://oauth/callback`, strict refresh-token rotation, the native credential issued, the
/// `__Host-` Studio cookie, and no browser origin allowed.
public struct EngineConfiguration: Hashable, Sendable {
    /// The one client this endpoint serves (RFC 6749 §3.2.1). Codes and refresh tokens of every other
    /// client are refused before they are consumed.
    public var servedClient: ClientID
    /// The served client's callback; `redirect_uri` must equal it byte for byte (RFC 6749 §3.1.2.3,
    /// RFC 8252 §8.4, RFC 9700 §2.1) as well as the URI stored with the code.
    public var callbackURI: String
    /// Lifetimes of codes, tokens and sessions.
    public var lifetimes: TokenLifetimes
    /// How long after a refresh token's rotation the client may present it once more — to recover a
    /// response lost in transit (FAPI 2.0's retry rule). Zero, the default, is strict rotation
    /// (RFC 9700 §4.14.2): any second use revokes the grant. Within a non-zero leeway only the
    /// immediately previous token is accepted again; each such use issues a new successor and retires
    /// the one issued before, which then revokes the grant if it is ever used. At most 60 seconds.
    public var refreshTokenReuseLeeway: Duration
    /// The Studio session cookie.
    public var cookie: SessionCookieConfiguration
    /// Whether responses carry the native `credential`. A server released before native API access
    /// sets this to `false`: code exchanges then still set the cookie and answer
    /// `authenticated: true`, but mint no access or refresh token, and the app uses Studio only.
    public var issuesNativeCredential: Bool
    /// Browser origins allowed to call the endpoint, each `scheme://host[:port]`. The native app sends no
    /// `Origin`; a request with any origin not listed here is refused with 400 (T-3), because the endpoint sets
    /// a session cookie for whoever calls it (login CSRF). Empty by default. Strings, compared byte for
    /// byte with the `Origin` field as browsers serialise it (RFC 6454 §6.1); ``validate()`` refuses any
    /// that is not `scheme://host[:port]`, so no parsing step could make two spellings of one origin
    /// differ from what the browser sends.
    public var allowedOrigins: Set<String>
    /// The largest body accepted, in bytes; larger bodies get 413. 1 KiB to 1 MiB, 8 KiB by default.
    public var maximumBodyBytes: Int
    /// The bits of an IPv6 peer address the rate limiter keys attempts by (L-1): 64 by default, one
    /// subscriber's usual share; 56 or 48 where the provider hands out those, so that one subscriber cannot
    /// spread its attempts over 256 or 65,536 buckets. 32 to 64.
    public var rateLimitIPv6PrefixLength: Int

    public init(
        servedClient: ClientID = .tilecastIOS,
        callbackURI: String = "tilecast-ios://oauth/callback",
        lifetimes: TokenLifetimes = TokenLifetimes(),
        refreshTokenReuseLeeway: Duration = .zero,
        cookie: SessionCookieConfiguration = SessionCookieConfiguration(),
        issuesNativeCredential: Bool = true,
        allowedOrigins: Set<String> = [],
        maximumBodyBytes: Int = 8192,
        rateLimitIPv6PrefixLength: Int = 64
    ) {
        self.servedClient = servedClient
        self.callbackURI = callbackURI
        self.lifetimes = lifetimes
        self.refreshTokenReuseLeeway = refreshTokenReuseLeeway
        self.cookie = cookie
        self.issuesNativeCredential = issuesNativeCredential
        self.allowedOrigins = allowedOrigins
        self.maximumBodyBytes = maximumBodyBytes
        self.rateLimitIPv6PrefixLength = rateLimitIPv6PrefixLength
    }

    /// Throws for an impossible or unsafe configuration. The engine calls this when it is created.
    public func validate() throws(ConfigurationError) {
        let printable = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        guard printable(servedClient.rawValue), printable(callbackURI) else { throw .invalidClientRegistration }
        try lifetimes.validate()
        guard refreshTokenReuseLeeway >= .zero, refreshTokenReuseLeeway <= .seconds(60) else {
            throw .lifetimeOutOfRange(.refreshTokenReuseLeeway, minimum: .zero, maximum: .seconds(60))
        }
        try cookie.validate()
        for origin in allowedOrigins where !Self.isOrigin(origin) {
            throw .invalidOrigin(origin)
        }
        guard (1024...1_048_576).contains(maximumBodyBytes) else { throw .bodyLimitOutOfRange }
        guard (32...64).contains(rateLimitIPv6PrefixLength) else { throw .ipv6PrefixLengthOutOfRange }
    }

    /// `scheme://host[:port]` as browsers serialise an origin (RFC 6454 §6.1): lowercase, no path.
    private static func isOrigin(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: ":"), maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(isSchemeCharacter) else { return false }
        let rest = parts[1]
        guard rest.starts(with: "//".utf8) else { return false }
        let authority = rest.dropFirst(2)
        return !authority.isEmpty && authority.allSatisfy(isAuthorityCharacter)
    }

    private static func isSchemeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    private static func isAuthorityCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
            UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
    }
}
