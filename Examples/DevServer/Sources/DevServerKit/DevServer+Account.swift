// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension DevServer {
    /// `GET /account?account=…`: a demo account's grants — live, revoked and expired — each live one with
    /// a revoke button, so that "revoking the grant ends the session" can be watched happening.
    func account(_ request: HTTPRequest) async -> HTTPResponse {
        let selected = request.query.first { $0.name == "account" }?.value ?? Self.demoAccounts[0].id.rawValue
        guard let account = Self.demoAccounts.first(where: { $0.id.rawValue == selected }) else {
            return .html(404, HTML.page(title: "Account", "<p>No such demo account.</p>"))
        }
        let grants: [Grant]
        do {
            grants = try await engine.grants(of: account.id)
        } catch {
            return .html(503, HTML.page(title: "Account", "<p>The store is unavailable.</p>"))
        }
        let now = Date()
        let rows = grants.reversed().map { grant -> String in
            let status: String
            if let revocation = grant.revocation {
                status = "revoked (\(revocation.reason.rawValue))"
            } else if now >= grant.expiresAt {
                status = "expired"
            } else {
                status = "live"
            }
            let action =
                grant.isLive(at: now)
                ? """
                <form class="inline" method="post" action="/account/revoke">\(HTML.hidden("account", account.id.rawValue))\(HTML.hidden("grant", grant.id.description))\(HTML.hidden("form_token", formTokens.mint(for: "revoke \(grant.id)")))<button type="submit">Revoke</button></form>
                """
                : ""
            return """
                <tr><td data-label="Grant"><code>\(HTML.escape(grant.id.description))</code></td><td data-label="Client">\(HTML.escape(grant.client.rawValue))</td>
                <td data-label="Created">\(HTML.escape(grant.createdAt.formatted(.iso8601)))</td><td class="status" data-label="Status">\(HTML.escape(status))</td><td>\(action)</td></tr>
                """
        }.joined()
        let others = Self.demoAccounts.map {
            "<a href=\"/account?account=\(FormData.encode($0.id.rawValue))\">\(HTML.escape($0.name))</a>"
        }.joined(separator: " · ")
        return .html(
            200,
            HTML.page(
                title: "Grants of \(account.name)",
                """
                <p>Accounts: \(others)</p>
                <p>Every app and browser signed in to this account, newest first. Revoking a grant ends its tokens
                and its Studio session at once.</p>
                <table><tr class="head"><th>Grant</th><th>Client</th><th>Created</th><th>Status</th><th></th></tr>
                \(rows.isEmpty ? "<tr><td colspan=\"5\">No grants yet.</td></tr>" : rows)</table>
                """
            )
        )
    }

    /// `POST /account/revoke`: revokes a grant — its tokens and its Studio session with it.
    func revoke(_ request: HTTPRequest) async -> HTTPResponse {
        let form = FormData.parse(request.body)
        let account = form.first { $0.name == "account" }?.value ?? ""
        guard FormData.repeatedName(in: form) == nil, let grantText = form.first(where: { $0.name == "grant" })?.value,
            let uuid = UUID(uuidString: grantText)
        else {
            return .html(400, HTML.page(title: "Revoke", "<p>Name one grant.</p>"))
        }
        guard isSameOrigin(request),
            formTokens.redeem(form.first { $0.name == "form_token" }?.value, for: "revoke \(GrantID(rawValue: uuid))")
        else {
            return .html(
                403,
                HTML.page(title: "Revoke", "<p>Revoke with the button on the account page; nothing changed.</p>")
            )
        }
        do {
            _ = try await engine.revokeGrant(GrantID(rawValue: uuid))
        } catch {
            return .html(503, HTML.page(title: "Revoke", "<p>The store is unavailable; nothing changed.</p>"))
        }
        return .redirect(to: "/account?account=\(FormData.encode(account))", status: 303)
    }
}
