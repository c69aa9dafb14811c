// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension DevServer {
    /// The try page's cookie: a nonce that binds each flow's `state` to the browser that started it
    /// (RFC 6749 §10.12), so that nobody can finish a flow of theirs in someone else's browser.
    static let tryCookie = "tilecast_try"

    /// `GET /try`: plays the app. It makes a PKCE pair and a state, remembers the verifier under the
    /// state and this browser's nonce, and sends the browser to the real sign-in page with the loopback
    /// callback `/try/callback`.
    func startTry(_ request: HTTPRequest) -> HTTPResponse {
        var nonce = cookieValues(named: Self.tryCookie, in: request).first ?? ""
        var setCookie: [(name: String, value: String)] = []
        if nonce.utf8.count != 64 || !nonce.allSatisfy(\.isHexDigit) {
            nonce = FormTokens.randomHex()
            let secure = configuration.usesTLS ? "; Secure" : ""
            setCookie = [
                ("Set-Cookie", "\(Self.tryCookie)=\(nonce); Path=/try; Max-Age=600; HttpOnly; SameSite=Lax\(secure)")
            ]
        }
        let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
        let state = tryFlows.mint(for: "try\u{0}" + nonce, payload: verifier)
        let query = [
            ("response_type", "code"), ("client_id", ClientID.tilecastIOS.rawValue),
            ("redirect_uri", tryEngine.configuration.callbackURI),
            ("code_challenge", CodeChallenge.s256(for: verifier).value), ("code_challenge_method", "S256"),
            ("scope", "tiles:read profile"), ("state", state),
        ].map { "\($0.0)=\(FormData.encode($0.1))" }.joined(separator: "&")
        return .redirect(to: "/oauth/authorize?\(query)", status: 303, headers: setCookie)
    }

    /// `GET /try/callback`: where the sign-in page sends the code. It checks that this browser started
    /// the flow (the state, with the nonce of its cookie, navigated to from this server's own page) and
    /// `iss`, exchanges the code at the endpoint exactly as the app does — the same request, the same
    /// engine rules — and shows the request and the response. The response's `Set-Cookie` goes to the
    /// browser, as the app imports it into its WebKit store, so Studio then shows the session.
    func finishTry(_ request: HTTPRequest) async -> HTTPResponse {
        func value(_ name: String) -> String? { request.query.first { $0.name == name }?.value }
        let sites = request.headers.filter { $0.name.lowercased() == "sec-fetch-site" }.map(\.value)
        let nonce = cookieValues(named: Self.tryCookie, in: request).first ?? ""
        guard sites.allSatisfy({ $0 == "same-origin" }), request.query.count(where: { $0.name == "state" }) == 1,
            let state = value("state"), let verifier = tryFlows.take(state, boundTo: "try\u{0}" + nonce)
        else {
            return .html(
                400,
                HTML.page(
                    title: "No code",
                    #"<p>This sign-in was not started in this browser, or is over. <a href="/try">Start again</a></p>"#
                )
            )
        }
        if let error = value("error") {
            let description = value("error_description").map { ": \(HTML.escape($0))" } ?? ""
            return .html(
                200,
                HTML.page(
                    title: "No code",
                    "<p>The sign-in page answered <code>\(HTML.escape(error))</code>\(description).</p>"
                        + #"<p><a href="/try">Start again</a></p>"#
                )
            )
        }
        guard let code = value("code"), value("iss") == issuer else {
            return .html(400, HTML.page(title: "No code", "<p>The callback lacks a code or this server's iss.</p>"))
        }
        let body = JSONEncodedBody.object([
            ("grant_type", "authorization_code"), ("client_id", ClientID.tilecastIOS.rawValue), ("code", code),
            ("redirect_uri", tryEngine.configuration.callbackURI), ("code_verifier", verifier),
        ])
        let response = await tryEngine.handle(
            request: EndpointRequest(
                method: "POST",
                headers: ["Content-Type": "application/json"],
                body: Array(body.utf8),
                peerAddress: request.peerAddress
            )
        )
        let setCookie = response.headers.values(for: "Set-Cookie")
        let shown = response.headers.fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        return .html(
            200,
            HTML.page(
                title: response.status == 200 ? "Signed in" : "The exchange failed",
                """
                <p>The app sent <code>POST /api/v1/oauth/ios-session</code> with:</p>
                <pre>\(HTML.escape(body))</pre>
                <p>and got <strong>\(response.status)</strong>:</p>
                <pre>\(HTML.escape(shown))\n\n\(HTML.escape(String(decoding: response.body, as: UTF8.self)))</pre>
                <p>\(setCookie.isEmpty ? "No cookie was set." : "The session cookie is now in this browser, as the app puts it in its WebKit store.")
                <a href="/studio">Open Studio</a> · <a href="/account">See the grant</a> · <a href="/try">Sign in again</a></p>
                """
            ),
            headers: setCookie.map { ("Set-Cookie", $0) }
        )
    }
}

/// A flat JSON object of strings, members in the given order.
enum JSONEncodedBody {
    static func object(_ members: [(String, String)]) -> String {
        let encoded = members.map { "\(quoted($0.0)):\(quoted($0.1))" }
        return "{" + encoded.joined(separator: ",") + "}"
    }

    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
