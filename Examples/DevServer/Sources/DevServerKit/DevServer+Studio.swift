// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension DevServer {
    /// `GET /studio`: who the session cookie belongs to, or that there is none.
    func studio(_ request: HTTPRequest) async -> HTTPResponse {
        let authentication: Authentication
        do {
            authentication = try await engine.authenticateSession(headers: HeaderFields(request.headers))
        } catch {
            return .html(503, HTML.page(title: "Studio", "<p>The store is unavailable.</p>"))
        }
        guard case .authenticated(let grant) = authentication else {
            return .html(
                200,
                HTML.page(
                    title: "Studio",
                    """
                    <p id="who">No session: not signed in.</p>
                    <p>Studio is Tilecast's web UI; this page shows whom the session cookie signs in. The app gets
                    that cookie from the endpoint and puts it in its WebKit store. <a href="/try">Sign in as the
                    app would</a>.</p>
                    """
                )
            )
        }
        let name = Self.demoAccounts.first { $0.id == grant.account }?.name ?? grant.account.rawValue
        return .html(
            200,
            HTML.page(
                title: "Studio",
                """
                <p id="who">Signed in as <strong>\(HTML.escape(name))</strong>
                (<code>\(HTML.escape(grant.account.rawValue))</code>).</p>
                <p>Grant <code>\(HTML.escape(grant.grant.description))</code>, client
                <code>\(HTML.escape(grant.client.rawValue))</code>, scope <code>\(HTML.escape(grant.scope.rawValue))</code>.</p>
                <form method="post" action="/studio/sign-out">\(HTML.hidden("form_token", formTokens.mint(for: signOutPurpose(request))))<button type="submit">Sign out</button></form>
                """
            )
        )
    }

    /// What a sign-out form's token is bound to: the session the page was shown to, so that a token of
    /// one session signs out no other.
    private func signOutPurpose(_ request: HTTPRequest) -> String {
        "sign-out\u{0}" + cookieValues(named: cookie.name, in: request).joined(separator: "\u{0}")
    }

    /// `POST /studio/sign-out`: signs the session out — which revokes its grant, with every token — and
    /// expires the cookie.
    func signOut(_ request: HTTPRequest) async -> HTTPResponse {
        let form = FormData.parse(request.body)
        guard isSameOrigin(request), FormData.repeatedName(in: form) == nil,
            formTokens.redeem(form.first { $0.name == "form_token" }?.value, for: signOutPurpose(request))
        else {
            return .html(
                403,
                HTML.page(title: "Sign out", "<p>Sign out with the button on the Studio page; nothing changed.</p>")
            )
        }
        do {
            _ = try await engine.signOut(headers: HeaderFields(request.headers))
        } catch {
            return .html(503, HTML.page(title: "Sign out", "<p>The store is unavailable; nothing changed.</p>"))
        }
        return .redirect(
            to: "/studio",
            status: 303,
            headers: [("Set-Cookie", SessionCookie.deletion(configuration: cookie).headerValue)]
        )
    }

    /// `GET /api/v1/me`: the native API's view of a bearer access token — the account behind it, or 401
    /// (RFC 6750 §3).
    func me(_ request: HTTPRequest) async -> HTTPResponse {
        let authentication: Authentication
        do {
            authentication = try await engine.authenticateBearer(headers: HeaderFields(request.headers))
        } catch {
            return .json(503, #"{"error":"temporarily_unavailable"}"#)
        }
        guard case .authenticated(let grant) = authentication else {
            return .json(
                401,
                #"{"error":"invalid_token","error_description":"The access token is missing, malformed, expired or revoked."}"#,
                headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]
            )
        }
        let body: [String: String] = [
            "account": grant.account.rawValue, "client": grant.client.rawValue, "scope": grant.scope.rawValue,
            "grant": grant.grant.description,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        return HTTPResponse(
            status: 200,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + HTTPResponse.common,
            body: Array(data)
        )
    }
}
