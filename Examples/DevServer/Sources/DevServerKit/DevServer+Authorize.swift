// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension DevServer {
    /// `GET /oauth/authorize`: the sign-in and consent page for a valid request; an error page or an
    /// error redirect otherwise (RFC 6749 §4.1.2.1). The whole request is checked here, before anyone
    /// signs in.
    func authorizePage(_ request: HTTPRequest) async -> HTTPResponse {
        let authorization: AuthorizationRequest
        do {
            authorization = try AuthorizationRequest(request.query, clients: clients)
        } catch {
            return answer(error)
        }
        let accounts = Self.demoAccounts.enumerated().map { index, account in
            """
            <label class="choice"><input type="radio" name="account" value="\(HTML.escape(account.id.rawValue))"\(index == 0 ? " checked" : "")>
            \(HTML.escape(account.name)) <code>\(HTML.escape(account.id.rawValue))</code></label>
            """
        }.joined()
        let token = formTokens.mint(for: authorization.formPurpose)
        let hidden = (authorization.formFields + [("form_token", token)]).map { HTML.hidden($0.name, $0.value) }
        return .html(
            200,
            HTML.page(
                title: "Sign in to Tilecast",
                """
                <p>This is the page the Tilecast app opens in a sheet to sign you in. Approving sends the app a
                one-time code at <code>\(HTML.escape(authorization.redirectURI))</code>.</p>
                <p><strong>\(HTML.escape(authorization.client.rawValue))</strong> asks for
                <code>\(HTML.escape(authorization.scope.isEmpty ? "(no scope)" : authorization.scope))</code>.</p>
                <form method="post" action="/oauth/authorize">
                \(hidden.joined())
                <p>Sign in as a demo account:</p>
                <p>\(accounts)</p>
                <p><button type="submit" name="decision" value="approve">Approve</button>
                <button type="submit" name="decision" value="deny">Deny</button></p>
                </form>
                """
            ),
            formTargets: [authorization.redirectURI]
        )
    }

    /// `POST /oauth/authorize`: the decision. It takes only what the page's form sends — each field
    /// once, the decision from the button pressed, a form token minted for this very request — from this
    /// server's own pages. Approval issues the code and redirects to the callback with `code` and
    /// `state`; denial redirects with `access_denied`.
    func authorizeDecision(_ request: HTTPRequest) async -> HTTPResponse {
        // It mints codes: rate-limited per peer like the endpoint, with the same limiter (429 and
        // Retry-After, RFC 6585 §4), before anything is read. A failing limiter refuses (fails closed).
        let decision: RateLimitDecision
        do {
            decision = try await rateLimiter.admit(.peer(request.peerAddress), at: Date())
        } catch {
            return .html(503, HTML.page(title: "Sign-in unavailable", "<p>Try again in a moment.</p>"))
        }
        if case .limited(let seconds) = decision {
            return .html(
                429,
                HTML.page(title: "Too many attempts", "<p>Too many sign-in attempts from here. Wait a little.</p>"),
                headers: [("Retry-After", String(seconds))]
            )
        }
        guard isSameOrigin(request) else {
            return .html(403, HTML.page(title: "Sign-in refused", "<p>The form was posted from another site.</p>"))
        }
        let form = FormData.parse(request.body)
        if let repeated = FormData.repeatedName(in: form) {
            return .html(
                400,
                HTML.page(
                    title: "Sign-in refused",
                    "<p>The field <code>\(HTML.escape(repeated))</code> is repeated.</p>"
                )
            )
        }
        let authorization: AuthorizationRequest
        do {
            authorization = try AuthorizationRequest(
                form.filter { !["account", "decision", "form_token"].contains($0.name) },
                clients: clients
            )
        } catch {
            return answer(error)
        }
        guard formTokens.redeem(form.first { $0.name == "form_token" }?.value, for: authorization.formPurpose) else {
            return .html(
                403,
                HTML.page(
                    title: "Sign-in refused",
                    "<p>This form has expired or was already used. Start the sign-in again from the app.</p>"
                )
            )
        }
        switch form.first(where: { $0.name == "decision" })?.value {
        case "deny":
            return .redirect(
                to: AuthorizationResponse.error(
                    .accessDenied,
                    description: "The user denied the request.",
                    redirectURI: authorization.redirectURI,
                    state: authorization.state,
                    issuer: issuer
                ).location
            )
        case "approve":
            break
        default:
            return .html(400, HTML.page(title: "Sign-in refused", "<p>Press Approve or Deny.</p>"))
        }
        guard let accountID = form.first(where: { $0.name == "account" })?.value,
            let account = Self.demoAccounts.first(where: { $0.id.rawValue == accountID })
        else {
            return .html(400, HTML.page(title: "Sign-in failed", "<p>Choose one of the demo accounts.</p>"))
        }
        do {
            let issued = try await engine.issueCode(
                account: account.id,
                client: authorization.client,
                redirectURI: authorization.redirectURI,
                codeChallenge: authorization.codeChallenge,
                codeChallengeMethod: authorization.codeChallengeMethod,
                scope: authorization.scope
            )
            return .redirect(
                to: AuthorizationResponse.success(
                    issued,
                    redirectURI: authorization.redirectURI,
                    state: authorization.state,
                    issuer: issuer
                ).location
            )
        } catch {
            guard
                let response = AuthorizationResponse.error(
                    error,
                    redirectURI: authorization.redirectURI,
                    state: authorization.state,
                    issuer: issuer
                )
            else {
                return .html(
                    400,
                    HTML.page(title: "Authorization failed", "<p>The client or redirect URI is not registered.</p>")
                )
            }
            return .redirect(to: response.location)
        }
    }

    private func answer(_ refusal: AuthorizationRequest.Refusal) -> HTTPResponse {
        switch refusal {
        case .page(let message):
            return .html(400, HTML.page(title: "Authorization failed", "<p>\(HTML.escape(message))</p>"))
        case .redirect(let uri, let error, let description, let state):
            return .redirect(
                to: AuthorizationResponse.error(
                    error,
                    description: description,
                    redirectURI: uri,
                    state: state,
                    issuer: issuer
                ).location
            )
        }
    }
}
