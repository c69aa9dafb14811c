// SPDX-License-Identifier: Apache-2.0

/// A response to send: status, header fields in order, body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Fields every response carries: no MIME sniffing, and no URL — which may hold a code or state — in
    /// a `Referer` to another site. (`same-origin`, not `no-referrer`: under `no-referrer` a browser sends
    /// `Origin: null` on a form post, and the same-origin check of the forms would refuse every post.)
    static let common: [(name: String, value: String)] = [
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"),
    ]

    /// The pages' Content-Security-Policy: nothing but inline style, no scripts, no framing, no `<base>`,
    /// and forms that post to this server only — plus `formTargets`, the places a form's post may be
    /// redirected to. CSP applies `form-action` to the redirects that follow a post (CSP 3 §6.4.3), so
    /// the authorize page lists its validated callback: without it, Chromium and WebKit cancel the
    /// redirect to `tilecast-ios://…` and the sign-in never completes. An `http`/`https` callback is
    /// allowed by its origin; any other by its scheme (`tilecast-ios:`) — Chromium does not match a
    /// host source such as `tilecast-ios://oauth/callback` against a custom scheme, and a source's path is
    /// not matched after a redirect anyway.
    static func contentSecurityPolicy(formTargets: [String] = []) -> String {
        let targets = formTargets.compactMap(cspSource).map { " \($0)" }.joined()
        return "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'\(targets); "
            + "frame-ancestors 'none'; base-uri 'none'"
    }

    /// A redirect URI as a CSP source: its origin for `http` and `https`, its scheme otherwise — and
    /// nothing for a URI with a character a policy cannot carry.
    static func cspSource(_ uri: String) -> String? {
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let scheme = uri[..<colon].lowercased()
        let schemeCharacters = "abcdefghijklmnopqrstuvwxyz0123456789+-."
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ schemeCharacters.contains($0) })
        else {
            return nil
        }
        guard !["javascript", "data", "blob", "filesystem"].contains(scheme) else { return nil }
        guard scheme == "http" || scheme == "https" else { return scheme + ":" }
        let rest = uri[uri.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"),
            authority.unicodeScalars.allSatisfy({
                $0.isASCII && $0.value > 0x20 && !";,'\"\\".unicodeScalars.contains($0)
            })
        else {
            return nil
        }
        return "\(scheme)://\(authority)"
    }

    /// An HTML page. Pages are never cached: they show sessions and grants as they are now.
    static func html(
        _ status: Int = 200,
        _ page: String,
        headers: [(name: String, value: String)] = [],
        formTargets: [String] = []
    ) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                ("Content-Security-Policy", contentSecurityPolicy(formTargets: formTargets)),
                ("X-Frame-Options", "DENY"),
            ] + common + headers,
            body: Array(page.utf8)
        )
    }

    /// A JSON body the caller has already encoded.
    static func json(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + common + headers,
            body: Array(body.utf8)
        )
    }

    /// A redirect: 302 for the authorization response (RFC 6749 §4.1.2), 303 after a form post.
    static func redirect(
        to location: String,
        status: Int = 302,
        headers: [(name: String, value: String)] = []
    )
        -> HTTPResponse
    {
        HTTPResponse(
            status: status,
            headers: [("Location", location), ("Cache-Control", "no-store")] + common + headers
        )
    }
}
