// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension DevServer {
    /// `GET /try`: plays the app. It makes a PKCE pair and a state, remembers the verifier under the
    /// state, and sends the browser to the real sign-in page with the loopback callback `/try/callback`.
    func startTry() -> HTTPResponse {
        let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
        let state = tryFlows.mint(for: verifier)
        let query = [
            ("response_type", "code"), ("client_id", ClientID.tilecastIOS.rawValue),
            ("redirect_uri", tryEngine.configuration.callbackURI),
            ("code_challenge", CodeChallenge.s256(for: verifier).value), ("code_challenge_method", "S256"),
            ("scope", "tiles:read profile"), ("state", state),
        ].map { "\($0.0)=\(FormData.encode($0.1))" }.joined(separator: "&")
        return .redirect(to: "/oauth/authorize?\(query)", status: 303)
    }

    /// `GET /try/callback`: where the sign-in page sends the code. It checks `state` and `iss`, exchanges
    /// the code at the endpoint exactly as the app does — the same request, the same engine rules — and
    /// shows the request and the response. The response's `Set-Cookie` goes to the browser, as the app
    /// imports it into its WebKit store, so Studio then shows the session.
    func finishTry(_ request: HTTPRequest) async -> HTTPResponse {
        func value(_ name: String) -> String? { request.query.first { $0.name == name }?.value }
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
        guard request.query.count(where: { $0.name == "state" }) == 1, let state = value("state"),
            let code = value("code"), value("iss") == issuer
        else {
            return .html(
                400,
                HTML.page(title: "No code", "<p>The callback lacks code, state or this server's iss.</p>")
            )
        }
        // The verifier was minted as the "purpose" of the state: redeeming checks the state and hands it back.
        guard let verifier = tryFlows.take(state) else {
            return .html(
                400,
                HTML.page(title: "No code", #"<p>Unknown or used state. <a href="/try">Start again</a></p>"#)
            )
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
