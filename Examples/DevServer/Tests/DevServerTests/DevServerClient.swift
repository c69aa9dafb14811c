// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

@testable import DevServerKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real HTTP client for a dev server started on an ephemeral loopback port: URLSession, redirects not
/// followed (the callback is the app's custom scheme), cookies sent by hand as the app's WebKit import
/// would.
final class DevServerClient: Sendable {
    let server: DevServer
    let base: String
    private let session: URLSession

    convenience init(store: DevServerConfiguration.Store = .memory) async throws {
        var configuration = DevServerConfiguration()
        configuration.store = store
        configuration.port = 0
        configuration.insecureDevelopmentCookie = true
        let server = try await DevServer(configuration: configuration, log: { _ in })
        try server.start()
        self.init(startedServer: server)
    }

    /// A client of a server the caller configured and started; it stops the server when it goes.
    convenience init(server: DevServer) async throws {
        self.init(startedServer: server)
    }

    private init(startedServer server: DevServer) {
        self.server = server
        base = server.baseURL
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: sessionConfiguration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit {
        server.stop()
    }

    struct Response {
        let status: Int
        let headers: [String: String]
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var credential: [String: Any]? { (json["data"] as? [String: Any])?["credential"] as? [String: Any] }
        var accessToken: String? { credential?["access_token"] as? String }
        var refreshToken: String? { credential?["refresh_token"] as? String }

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }

        /// The session id a `Set-Cookie` carries, or `nil`.
        var sessionCookie: String? {
            guard let setCookie = header("Set-Cookie"), let pair = setCookie.split(separator: ";").first,
                let equals = pair.firstIndex(of: "=")
            else { return nil }
            return String(pair[pair.index(after: equals)...])
        }

        /// The query of a redirect's `Location`, decoded.
        var redirectQuery: [String: String] {
            guard let location = header("Location"), let components = URLComponents(string: location) else {
                return [:]
            }
            return Dictionary(
                (components.queryItems ?? []).map { ($0.name, $0.value ?? "") },
                uniquingKeysWith: { first, _ in first }
            )
        }
    }

    func send(
        _ method: String,
        _ path: String,
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> Response {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            fields["\(name)"] = "\(value)"
        }
        return Response(status: http.statusCode, headers: fields, body: data)
    }

    func postJSON(_ path: String, _ members: [String: Any], cookie: String? = nil) async throws -> Response {
        var headers = ["Content-Type": "application/json"]
        if let cookie {
            headers["Cookie"] = "tilecast_session=\(cookie)"
        }
        return try await send(
            "POST",
            path,
            body: try JSONSerialization.data(withJSONObject: members, options: [.sortedKeys]),
            headers: headers
        )
    }

    /// Posts a form as a browser does from this server's pages: with `Origin` (the server's, unless
    /// `origin` says otherwise; `nil` sends none).
    func postForm(
        _ path: String,
        _ fields: [(String, String)],
        cookie: String? = nil,
        origin: String?? = .none
    ) async throws -> Response {
        let body = fields.map { "\(FormData.encode($0.0))=\(FormData.encode($0.1))" }.joined(separator: "&")
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        switch origin {
        case .none: headers["Origin"] = base
        case .some(.some(let given)): headers["Origin"] = given
        case .some(.none): break
        }
        if let cookie {
            headers["Cookie"] = "tilecast_session=\(cookie)"
        }
        return try await send("POST", path, body: Data(body.utf8), headers: headers)
    }

    /// The hidden fields of the first form on `page` whose action is `action`, decoded — what a browser
    /// would send of them.
    static func hiddenFields(of page: Response, action: String) -> [(String, String)] {
        let text = page.text
        guard let start = text.range(of: #"action="\#(action)""#) else { return [] }
        let form = text[start.upperBound...]
        let end = form.range(of: "</form>")?.lowerBound ?? form.endIndex
        let body = form[..<end]
        var fields: [(String, String)] = []
        for match in body.matches(of: #/<input type="hidden" name="([^"]*)" value="([^"]*)">/#) {
            fields.append((unescape(String(match.output.1)), unescape(String(match.output.2))))
        }
        return fields
    }

    private static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Opens the authorize page for `parameters` and submits its form as a browser does, with `extra`
    /// fields (the account radio, the button pressed).
    func submitAuthorize(_ parameters: [(String, String)], _ extra: [(String, String)]) async throws -> Response {
        let page = try await send("GET", "/oauth/authorize" + Self.query(parameters))
        guard page.status == 200 else { throw ClientError("the authorize page answered \(page.status)") }
        return try await postForm("/oauth/authorize", Self.hiddenFields(of: page, action: "/oauth/authorize") + extra)
    }

    // MARK: The flow

    /// A fresh PKCE verifier and its S256 challenge.
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
        return (verifier, CodeChallenge.s256(for: verifier).value)
    }

    /// The authorize query for `challenge`.
    static func authorizeParameters(challenge: String, state: String = "state-42") -> [(String, String)] {
        [
            ("response_type", "code"), ("client_id", "tilecast-ios"), ("redirect_uri", "tilecast-ios://oauth/callback"),
            ("code_challenge", challenge), ("code_challenge_method", "S256"), ("state", state),
            ("scope", "tiles:read profile"),
        ]
    }

    static func query(_ parameters: [(String, String)]) -> String {
        "?" + parameters.map { "\(FormData.encode($0.0))=\(FormData.encode($0.1))" }.joined(separator: "&")
    }

    /// Opens the authorize page, approves as `account`, and returns the code from the redirect.
    func authorize(challenge: String, account: String = "ada@tilecast.test") async throws -> String {
        let approval = try await submitAuthorize(
            Self.authorizeParameters(challenge: challenge),
            [("account", account), ("decision", "approve")]
        )
        guard approval.status == 302, approval.redirectQuery["state"] == "state-42",
            approval.redirectQuery["iss"] == server.baseURL, let code = approval.redirectQuery["code"]
        else {
            throw ClientError("approval answered \(approval.status) to \(approval.header("Location") ?? "nowhere")")
        }
        return code
    }

    func exchange(code: String, verifier: String) async throws -> Response {
        try await postJSON(
            "/api/v1/oauth/ios-session",
            [
                "grant_type": "authorization_code", "client_id": "tilecast-ios", "code": code,
                "redirect_uri": "tilecast-ios://oauth/callback", "code_verifier": verifier,
            ]
        )
    }

    func refresh(_ token: String, studioSession: Bool) async throws -> Response {
        try await postJSON(
            "/api/v1/oauth/ios-session",
            [
                "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": token,
                "studio_session": studioSession,
            ]
        )
    }

    func studio(cookie: String?) async throws -> Response {
        try await send("GET", "/studio", headers: cookie.map { ["Cookie": "tilecast_session=\($0)"] } ?? [:])
    }

    func me(accessToken: String) async throws -> Response {
        try await send("GET", "/api/v1/me", headers: ["Authorization": "Bearer \(accessToken)"])
    }
}
