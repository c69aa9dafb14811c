// SPDX-License-Identifier: Apache-2.0

/// How the Studio session cookie is named and scoped.
///
/// The defaults are the production cookie the iOS app imports into its isolated WebKit store: a
/// `__Host-` name, `Secure`, `Path=/`, no `Domain`, `SameSite=Lax` (rfc6265bis §4.1.3.2). It is always
/// `HttpOnly` — the endpoint's contract calls it "a normal HttpOnly Studio session cookie" — and always
/// carries an explicit `Max-Age` (the session lifetime, at most 400 days, rfc6265bis §5.5). Set the
/// fields to match the server's normal Studio login cookie; ``validate()`` refuses combinations a
/// browser would reject.
public struct SessionCookieConfiguration: Hashable, Sendable {
    /// The cookie name — the same name the web login uses, so Studio recognises the session.
    public var name: String
    /// Whether the cookie is `Secure`. Only a development server on plain HTTP turns this off, with a
    /// name without the `__Host-`/`__Secure-` prefix.
    public var secure: Bool
    /// The `Path`; `/` so that a browser does not scope the cookie to `/api/v1/oauth` (rfc6265bis
    /// §4.1.2.4).
    public var path: String
    /// The `Domain`, or `nil` for a host-only cookie (rfc6265bis §4.1.2.3). Setting one forfeits the
    /// `__Host-` prefix.
    public var domain: String?
    /// The `SameSite` attribute.
    public var sameSite: SameSite

    public init(
        name: String = "__Host-tilecast_session",
        secure: Bool = true,
        path: String = "/",
        domain: String? = nil,
        sameSite: SameSite = .lax
    ) {
        self.name = name
        self.secure = secure
        self.path = path
        self.domain = domain
        self.sameSite = sameSite
    }

    /// Throws when a browser would reject the cookie or the combination is unsafe. Prefixes are matched
    /// case-insensitively, as user agents match them (rfc6265bis §5.4).
    public func validate() throws(ConfigurationError) {
        guard !name.isEmpty, name.utf8.allSatisfy(ASCII.isTokenCharacter) else { throw .invalidCookieName }
        if ASCII.hasPrefixIgnoringCase(name, "__Host-") {
            guard secure else { throw .hostPrefixRequiresSecure }
            guard path == "/" else { throw .hostPrefixRequiresRootPath }
            guard domain == nil else { throw .hostPrefixForbidsDomain }
        }
        if ASCII.hasPrefixIgnoringCase(name, "__Secure-") && !secure {
            throw .securePrefixRequiresSecure
        }
        if sameSite == .none && !secure {
            throw .sameSiteNoneRequiresSecure
        }
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3B }) else {
            throw .invalidCookiePath
        }
        if let domain {
            let labelsValid = domain.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                !label.isEmpty && label.utf8.allSatisfy { Self.isHostCharacter($0) }
            }
            guard labelsValid else { throw .invalidCookieDomain }
        }
    }

    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"): true
        default: false
        }
    }
}
