// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
import Testing
import TilecastAuth
import TilecastAuthConformance

@testable import DevServerKit

/// The pages around the endpoint: what a browser is sent and what a crafted link or another site can
/// make it do. Each test is one finding of the first real-browser trial (issue 15).
struct PageSecurityTests {
    private static let goodState = "state-42"

    private func good(_ challenge: String) -> [(String, String)] {
        DevServerClient.authorizeParameters(challenge: challenge, state: Self.goodState)
    }

    @Test("Escaping walks scalars: U+0600 joined to < > \" ' & is still escaped")
    func escapingByScalar() {
        let hostile = "\u{600}<meta>\u{600}\"\u{600}'\u{600}&\u{600}>"
        let escaped = HTML.escape(hostile)
        #expect(!escaped.unicodeScalars.contains { "<>\"'".unicodeScalars.contains($0) })
        #expect(escaped == "\u{600}&lt;meta&gt;\u{600}&quot;\u{600}&#39;\u{600}&amp;\u{600}&gt;")
    }

    @Test("The authorize form echoes only the validated parameters, never what else the link carried")
    func onlyValidatedParametersAreEchoed() async throws {
        let client = try await DevServerClient()
        let (_, challenge) = DevServerClient.pkce()
        let polluted =
            good(challenge) + [("decision", "approve"), ("account", "grace@tilecast.test"), ("form_token", "x")]
        let page = try await client.send("GET", "/oauth/authorize" + DevServerClient.query(polluted))
        #expect(page.status == 200)
        let names = DevServerClient.hiddenFields(of: page, action: "/oauth/authorize").map(\.0)
        #expect(
            names == [
                "response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "scope",
                "state", "form_token",
            ]
        )
        // Deny on that page denies: the link's decision and account never reach the post.
        let fields = DevServerClient.hiddenFields(of: page, action: "/oauth/authorize")
        let denied = try await client.postForm("/oauth/authorize", fields + [("decision", "deny")])
        #expect(denied.redirectQuery["error"] == "access_denied")
        #expect(denied.redirectQuery["code"] == nil)
    }

    @Test("A post that repeats a field is refused, and issues nothing")
    func repeatedFieldsAreRefused() async throws {
        let client = try await DevServerClient()
        let (_, challenge) = DevServerClient.pkce()
        for extra in [
            [("decision", "deny"), ("decision", "approve"), ("account", "ada@tilecast.test")],
            [("decision", "approve"), ("account", "ada@tilecast.test"), ("account", "grace@tilecast.test")],
        ] {
            let response = try await client.submitAuthorize(good(challenge), extra)
            #expect(response.status == 400)
            #expect(response.header("Location") == nil)
        }
        #expect(try await client.server.engine.grants(of: "ada@tilecast.test").isEmpty)
    }

    @Test("Posts from another site, without the form's token, or with a used one are refused")
    func crossSitePostsAreRefused() async throws {
        let client = try await DevServerClient()
        let (_, challenge) = DevServerClient.pkce()
        let approve = [("account", "ada@tilecast.test"), ("decision", "approve")]
        let page = try await client.send("GET", "/oauth/authorize" + DevServerClient.query(good(challenge)))
        let fields = DevServerClient.hiddenFields(of: page, action: "/oauth/authorize")

        let foreign = try await client.postForm("/oauth/authorize", fields + approve, origin: "https://evil.test")
        #expect(foreign.status == 403 && foreign.header("Location") == nil)
        let tokenless = try await client.postForm(
            "/oauth/authorize",
            fields.filter { $0.0 != "form_token" } + approve
        )
        #expect(tokenless.status == 403 && tokenless.header("Location") == nil)
        // The token of another request (another state) does not approve this one.
        let other = try await client.send(
            "GET",
            "/oauth/authorize"
                + DevServerClient.query(DevServerClient.authorizeParameters(challenge: challenge, state: "s2"))
        )
        let otherToken = try #require(
            DevServerClient.hiddenFields(of: other, action: "/oauth/authorize").first { $0.0 == "form_token" }
        )
        let swapped = try await client.postForm(
            "/oauth/authorize",
            fields.filter { $0.0 != "form_token" } + [otherToken] + approve
        )
        #expect(swapped.status == 403)

        // A post without Origin (an old browser) still works with its token — once.
        let first = try await client.postForm("/oauth/authorize", fields + approve, origin: .some(nil))
        #expect(first.status == 302 && first.redirectQuery["code"] != nil)
        let again = try await client.postForm("/oauth/authorize", fields + approve)
        #expect(again.status == 403)
    }

    @Test("Sign-out and revoke need their page's token: a forged post changes nothing")
    func studioAndAccountFormsNeedTokens() async throws {
        let client = try await DevServerClient()
        let (verifier, challenge) = DevServerClient.pkce()
        let code = try await client.authorize(challenge: challenge)
        let cookie = try #require(try await client.exchange(code: code, verifier: verifier).sessionCookie)
        let grant = try #require(try await client.server.engine.grants(of: "ada@tilecast.test").first)

        let forgedSignOut = try await client.postForm("/studio/sign-out", [], cookie: cookie)
        #expect(forgedSignOut.status == 403)
        let forgedRevoke = try await client.postForm(
            "/account/revoke",
            [("account", "ada@tilecast.test"), ("grant", grant.id.description)]
        )
        #expect(forgedRevoke.status == 403)
        let studioPage = try await client.studio(cookie: cookie)
        let foreign = try await client.postForm(
            "/studio/sign-out",
            DevServerClient.hiddenFields(of: studioPage, action: "/studio/sign-out"),
            cookie: cookie,
            origin: "https://evil.test"
        )
        #expect(foreign.status == 403)
        #expect(try await client.studio(cookie: cookie).text.contains("Ada Lovelace"))

        // A sign-out token shown to another session signs this one out no more.
        let (otherVerifier, otherChallenge) = DevServerClient.pkce()
        let otherCode = try await client.authorize(challenge: otherChallenge)
        let other = try #require(try await client.exchange(code: otherCode, verifier: otherVerifier).sessionCookie)
        let otherPage = try await client.studio(cookie: other)
        let borrowed = try await client.postForm(
            "/studio/sign-out",
            DevServerClient.hiddenFields(of: otherPage, action: "/studio/sign-out"),
            cookie: cookie
        )
        #expect(borrowed.status == 403)
        #expect(try await client.studio(cookie: cookie).text.contains("Ada Lovelace"))
    }

    @Test("Pages forbid framing, <base> and sniffing; the authorize page lets its form reach the app's scheme only")
    func pageHeaders() async throws {
        let client = try await DevServerClient()
        let (_, challenge) = DevServerClient.pkce()
        let authorize = try await client.send("GET", "/oauth/authorize" + DevServerClient.query(good(challenge)))
        let policy = try #require(authorize.header("Content-Security-Policy"))
        #expect(policy.contains("form-action 'self' tilecast-ios:;"))
        #expect(policy.contains("frame-ancestors 'none'") && policy.contains("base-uri 'none'"))
        #expect(!policy.contains("script-src"))
        let home = try await client.send("GET", "/")
        #expect(home.header("Content-Security-Policy")?.contains("form-action 'self';") == true)
        #expect(home.text.contains("<title>Tilecast dev server</title>"))
        let endpoint = try await client.postJSON("/api/v1/oauth/ios-session", [:])
        for response in [authorize, home, endpoint, try await client.send("GET", "/api/v1/me")] {
            #expect(response.header("X-Content-Type-Options") == "nosniff")
        }
        #expect(HTTPResponse.cspSource("https://studio.test:8443/cb?x=1#f") == "https://studio.test:8443")
        #expect(HTTPResponse.cspSource("javascript:alert(1)") == nil)
        #expect(HTTPResponse.cspSource("https://a.test;script-src *") == nil)
    }

    @Test("A malformed challenge is refused when the page is first loaded, with error_description")
    func challengeIsCheckedAtGet() async throws {
        let client = try await DevServerClient()
        for challenge in [
            "abc", String(repeating: "A", count: 200), String(repeating: "+/=", count: 14) + "A",
            String(repeating: "A", count: 42) + "B",
        ] {
            let response = try await client.send("GET", "/oauth/authorize" + DevServerClient.query(good(challenge)))
            #expect(response.status == 302, "\(challenge)")
            #expect(response.redirectQuery["error"] == "invalid_request")
            #expect(response.redirectQuery["error_description"]?.contains("code_challenge") == true)
            #expect(response.redirectQuery["state"] == Self.goodState)
        }
    }

    /// A started server on an ephemeral port, and the lines it logs.
    private static func startLoggedServer() async throws -> (DevServer, LogLines) {
        let lines = LogLines()
        var configuration = DevServerConfiguration()
        configuration.port = 0
        let server = try await DevServer(configuration: configuration, log: { lines.append($0) })
        try server.start()
        return (server, lines)
    }

    @Test("A percent-encoded line break in the path cannot forge a log line")
    func logLinesCannotBeForged() async throws {
        let (server, lines) = try await Self.startLoggedServer()
        defer { server.stop() }
        let port = try #require(UInt16(server.baseURL.split(separator: ":").last.map(String.init) ?? ""))
        _ = await HTTPWire(host: "127.0.0.1", port: port, timeout: .seconds(5)).send([
            WireRequest(method: "GET", target: "/x%0d%0aPOST%20/account/revoke%20303%1b[31m", headers: [], body: [])
        ])
        let logged = lines.all
        #expect(logged.count == 1)
        #expect(logged.allSatisfy { !$0.contains("\n") && !$0.contains("\r") && !$0.contains("\u{1b}") })
        #expect(logged.first?.hasPrefix("GET /x%0D%0APOST%20/account/revoke%20303%1B[31m 404") == true)
    }

    @Test("A %00 in the path is not decoded: /studio%00/evil is not /studio")
    func encodedNulIsNotAPathEnd() async throws {
        let (server, lines) = try await Self.startLoggedServer()
        defer { server.stop() }
        let port = try #require(UInt16(server.baseURL.split(separator: ":").last.map(String.init) ?? ""))
        let response = try await HTTPWire(host: "127.0.0.1", port: port, timeout: .seconds(5)).send([
            WireRequest(method: "GET", target: "/studio%00/evil", headers: [], body: [])
        ])[0].get()
        #expect(response.status == 404)
        #expect(lines.all.first?.hasPrefix("GET /studio%2500/evil 404") == true, "\(lines.all)")
    }

    @Test("The command line: unknown flags, missing values, and a cookie flag that TLS makes meaningless")
    func commandLine() throws {
        func error(_ arguments: [String]) -> String? {
            do {
                _ = try DevServerConfiguration(arguments: arguments)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(error(["--bogus"]) == "unknown option --bogus")
        #expect(error(["--port"]) == "--port needs a value")
        #expect(error(["--store", "postgres"]) == "--store postgres needs --database-url")
        #expect(
            error(["--insecure-development-cookie", "--tls-cert", "c.pem", "--tls-key", "k.pem"])?.contains("TLS")
                == true
        )
        #expect(error(["--port", "0", "--conformance-control"]) == nil)
        #expect(error(["--rate-limit", "0"]) == "--rate-limit takes a count ≥ 1")
        #expect(error(["--prune-every", "soon"]) == "--prune-every takes seconds")
        let tuned = try DevServerConfiguration(arguments: [
            "--rate-limit", "7", "--rate-limit-refill", "0.5", "--pool-size", "3", "--pool-wait", "2",
            "--statement-timeout", "1", "--operation-timeout", "1.5", "--prune-every", "30",
        ])
        #expect(tuned.rateLimit == (7, 0.5) && tuned.poolSize == 3 && tuned.poolWaitSeconds == 2)
        #expect(tuned.statementTimeoutSeconds == 1 && tuned.operationTimeoutSeconds == 1.5)
        #expect(tuned.pruneIntervalSeconds == 30)
    }

    @Test("The sign-in form's post, which mints codes, is rate-limited per peer like the endpoint")
    func authorizePostIsRateLimited() async throws {
        var configuration = DevServerConfiguration()
        configuration.port = 0
        configuration.rateLimit = (capacity: 2, refillSeconds: 60)
        let server = try await DevServer(configuration: configuration, log: { _ in })
        try server.start()
        defer { server.stop() }
        let client = try await DevServerClient(server: server)
        var statuses: [Int] = []
        for _ in 0..<3 {
            let (_, challenge) = DevServerClient.pkce()
            let response = try await client.submitAuthorize(
                DevServerClient.authorizeParameters(challenge: challenge),
                [("account", "ada@tilecast.test"), ("decision", "approve")]
            )
            statuses.append(response.status)
            if response.status == 429 {
                #expect(response.header("Retry-After").flatMap(Int.init) ?? 0 >= 1)
                #expect(response.header("Location") == nil)
            }
        }
        #expect(statuses == [302, 302, 429])
        // The endpoint shares the bucket: it is empty too.
        #expect(try await client.postJSON("/api/v1/oauth/ios-session", [:]).status == 429)
    }

    @Test("Expired records are pruned periodically, so memory follows the live set")
    func expiredRecordsArePruned() async throws {
        let lines = LogLines()
        var configuration = DevServerConfiguration()
        configuration.port = 0
        configuration.pruneIntervalSeconds = 0.05
        let server = try await DevServer(
            configuration: configuration,
            log: { lines.append($0) },
            defects: .init(),
            pruningClock: { Date().addingTimeInterval(86_400) }  // a day on: the code has expired
        )
        try server.start()
        defer { server.stop() }
        let client = try await DevServerClient(server: server)
        let (_, challenge) = DevServerClient.pkce()
        _ = try await client.authorize(challenge: challenge)
        for _ in 0..<100 where !lines.all.contains(where: { $0.hasPrefix("pruned ") }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(lines.all.contains("pruned 1 expired records"), "\(lines.all)")
    }

    @Test("A missing TLS file is named in the error, not a Foundation error code")
    func missingTLSFile() async throws {
        var configuration = DevServerConfiguration()
        configuration.port = 0
        configuration.tlsKeyPath = "/nonexistent/key.pem"
        configuration.tlsCertificatePath = "/nonexistent/cert.pem"
        let server = try await DevServer(configuration: configuration, log: { _ in })
        #expect(throws: HTTPServerError("cannot read the TLS key at /nonexistent/key.pem: no such readable PEM file")) {
            try server.start()
        }
    }

    @Test("The try page plays the app: PKCE and state made for you, the real sign-in page, the exchange shown")
    func tryPage() async throws {
        let client = try await DevServerClient()
        let start = try await client.send("GET", "/try")
        #expect(start.status == 303)
        let tryCookie = try #require(start.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        #expect(start.header("Set-Cookie")?.contains("HttpOnly") == true)
        let location = try #require(start.header("Location"))
        let query = try #require(URLComponents(string: location)?.queryItems)
        let parameters = query.map { ($0.name, $0.value ?? "") }
        #expect(parameters.first { $0.0 == "redirect_uri" }?.1 == client.server.baseURL + "/try/callback")
        let approval = try await client.submitAuthorize(
            parameters,
            [("account", "ada@tilecast.test"), ("decision", "approve")]
        )
        let callback = try #require(approval.header("Location"))
        #expect(callback.hasPrefix(client.server.baseURL + "/try/callback?"))
        let path = String(callback.dropFirst(client.server.baseURL.count))
        // Finished in another browser — without the cookie of the one that started it, or navigated to
        // from another site — it is refused, and sets no cookie (RFC 6749 §10.12).
        let elsewhere = try await client.send(
            "GET",
            path,
            headers: ["Cookie": "tilecast_try=" + String(repeating: "0", count: 64)]
        )
        #expect(elsewhere.status == 400 && elsewhere.header("Set-Cookie") == nil)
        let crossSite = try await client.send(
            "GET",
            path,
            headers: ["Cookie": tryCookie, "Sec-Fetch-Site": "cross-site"]
        )
        #expect(crossSite.status == 400 && crossSite.header("Set-Cookie") == nil)
        let result = try await client.send("GET", path, headers: ["Cookie": tryCookie])
        #expect(result.status == 200)
        #expect(result.text.contains("<title>Signed in · Tilecast dev server</title>"))
        let cookie = try #require(result.sessionCookie)
        #expect(try await client.studio(cookie: cookie).text.contains("Ada Lovelace"))
        // The state works once.
        let replay = try await client.send("GET", path, headers: ["Cookie": tryCookie])
        #expect(replay.status == 400)
        // A code of the try page's callback is no code for the app's endpoint (C-5).
        #expect(try await client.server.engine.grants(of: "ada@tilecast.test").count == 1)
    }
}

/// The lines a server logs, collected across threads.
private final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    var all: [String] { lines.withLock { $0 } }
}
