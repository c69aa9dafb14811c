// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
public import TilecastAuth
public import TilecastAuthConformance
@_spi(Testing) public import TilecastAuthPostgres

/// A local Tilecast auth server: TilecastAuth's engine embedded exactly as a production server embeds
/// it, behind libmicrohttpd, with the pages around the endpoint that a sign-in needs — the authorize
/// page, Studio, the native API and an account page with the grants.
public final class DevServer: Sendable {
    /// The demo accounts anyone may sign in as.
    public static let demoAccounts: [(id: AccountID, name: String)] = [
        ("ada@tilecast.test", "Ada Lovelace"), ("grace@tilecast.test", "Grace Hopper"),
    ]
    static let callback = "tilecast-ios://oauth/callback"

    /// The registered client, `tilecast-ios`: the app's callback, and the loopback callback of the try
    /// page (`/try/callback`), which plays the app in a browser. A native client may register a loopback
    /// redirect (RFC 8252 §7.3); the endpoint still redeems only codes issued to the app's callback (C-5).
    let clients: [Client]

    public let engine: AuthEngine
    /// The try page's endpoint: the same store and rules, serving the loopback callback.
    let tryEngine: AuthEngine
    /// The try page's flows under way: state → PKCE verifier.
    let tryFlows = FormTokens()
    /// The port the server listens on: the configured one, or a free one chosen at start-up.
    private let listenPort: UInt16
    let configuration: DevServerConfiguration
    let cookie: SessionCookieConfiguration
    private let http: HTTPServer
    private let postgresStore: PostgresGrantStore?
    /// The store, for pruning.
    private let store: any GrantStore
    /// The limiter of the endpoint, which the sign-in form's post shares.
    let rateLimiter: any RateLimiter
    /// The clock pruning reads (a test moves it ahead).
    private let pruningClock: @Sendable () -> Date
    /// The task that removes expired records every ``DevServerConfiguration/pruneIntervalSeconds``.
    private let pruning = Mutex<Task<Void, Never>?>(nil)
    /// The conformance control API, when ``DevServerConfiguration/conformanceControl`` is on.
    private let conformance: ConformanceControl?
    /// The control API's token: 256 random bits, printed at start; `nil` without the control API.
    public let conformanceToken: String?
    /// Where each request's line goes: method, path, status, duration — never a query, header or body.
    private let log: @Sendable (String) -> Void

    /// Defects a test plants on purpose, to show that the conformance runner finds them over HTTP.
    /// Internal: only a `@testable` test can plant one.
    struct PlantedDefects: Sendable {
        /// The endpoint's responses lose `Cache-Control` (T-6).
        var dropsCacheControl = false
        /// Wraps the store of every conformance world (to make it forget a revocation, say).
        var conformanceStore: (@Sendable (any ConformanceStore) -> any ConformanceStore)?
    }

    private let defects: PlantedDefects
    /// The pages' form tokens (against cross-site request forgery).
    let formTokens = FormTokens()

    /// Prepares the server: the store (a PostgreSQL one is migrated), the engine and its cookie.
    public convenience init(
        configuration: DevServerConfiguration,
        log: @escaping @Sendable (String) -> Void = { print($0) }
    ) async throws {
        try await self.init(configuration: configuration, log: log, defects: PlantedDefects())
    }

    init(
        configuration: DevServerConfiguration,
        log: @escaping @Sendable (String) -> Void,
        defects: PlantedDefects,
        pruningClock: @escaping @Sendable () -> Date = { Date() }
    ) async throws {
        self.pruningClock = pruningClock
        self.configuration = configuration
        self.defects = defects
        self.log = log
        cookie =
            configuration.insecureDevelopmentCookie && !configuration.usesTLS
            ? SessionCookieConfiguration(name: "tilecast_session", secure: false)
            : SessionCookieConfiguration()
        listenPort = configuration.port != 0 ? configuration.port : try HTTPServer.freePort(on: configuration.host)
        let base = "\(configuration.usesTLS ? "https" : "http")://\(configuration.host):\(listenPort)"
        let clients = [
            Client(
                id: .tilecastIOS,
                redirectURIs: [Self.callback, base + "/try/callback"],
                allowedScopeTokens: ["tiles:read", "tiles:write", "profile"]
            )
        ]
        self.clients = clients
        let store: any GrantStore
        let limiter: any RateLimiter
        let executor: (any TaskExecutor)?
        switch configuration.store {
        case .memory:
            store = InMemoryGrantStore(clients: clients)
            limiter = InMemoryRateLimiter(
                capacity: configuration.rateLimit.capacity,
                refillInterval: configuration.rateLimit.refillSeconds
            )
            postgresStore = nil
            executor = nil
        case .postgres(let databaseURL):
            let postgresConfiguration = try PostgresConfiguration(
                databaseURL: databaseURL,
                schema: "tilecast_dev",
                maximumConnections: configuration.poolSize,
                connectTimeout: configuration.connectTimeoutSeconds,
                connectionWaitTimeout: .milliseconds(Int64(configuration.poolWaitSeconds * 1000)),
                statementTimeout: .milliseconds(Int64(configuration.statementTimeoutSeconds * 1000)),
                operationTimeout: configuration.operationTimeoutSeconds.map { .milliseconds(Int64($0 * 1000)) }
            )
            let postgres = PostgresGrantStore(clients: clients, configuration: postgresConfiguration)
            try await postgres.migrate()
            store = postgres
            limiter = PostgresRateLimiter(
                configuration: postgresConfiguration,
                capacity: configuration.rateLimit.capacity,
                refillInterval: configuration.rateLimit.refillSeconds
            )
            postgresStore = postgres
            executor = postgres.taskExecutor
        }
        rateLimiter = limiter
        self.store = store
        let accounts = InMemoryAccountDirectory(activeAccounts: Set(Self.demoAccounts.map(\.id)))
        engine = try AuthEngine(
            configuration: EngineConfiguration(callbackURI: Self.callback, cookie: cookie),
            store: store,
            accounts: accounts,
            rateLimiter: limiter
        )
        tryEngine = try AuthEngine(
            configuration: EngineConfiguration(callbackURI: base + "/try/callback", cookie: cookie),
            store: store,
            accounts: accounts,
            rateLimiter: limiter
        )
        if configuration.conformanceControl {
            guard configuration.host.hasPrefix("127.") else {
                throw HTTPServerError("--conformance-control serves loopback only; drop --host \(configuration.host)")
            }
            let token = FormTokens.randomHex()
            conformanceToken = token
            let makeStore = Self.conformanceStoreFactory(configuration.store)
            let wrap = defects.conformanceStore
            conformance = try await ConformanceControl(token: token) { clients in
                let store = try await makeStore(clients)
                return wrap?(store) ?? store
            }
        } else {
            conformanceToken = nil
            conformance = nil
        }
        let router = Router()
        // On PostgreSQL every request runs on the store's executor, so that its statements wait for the
        // server in place rather than on a thread of their own (PostgresGrantStore.taskExecutor).
        http = HTTPServer { request in
            await withTaskExecutorPreference(executor) { await router.handle(request) }
        }
        router.server.withLock { $0 = self }
    }

    /// Starts listening and returns the port.
    @discardableResult
    public func start() throws -> UInt16 {
        var tls: (key: String, certificate: String)?
        if let keyPath = configuration.tlsKeyPath, let certificatePath = configuration.tlsCertificatePath {
            func pem(_ path: String, _ what: String) throws -> String {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw HTTPServerError("cannot read the TLS \(what) at \(path): no such readable PEM file")
                }
                return text
            }
            tls = (try pem(keyPath, "key"), try pem(certificatePath, "certificate"))
        }
        let port = try http.start(host: configuration.host, port: listenPort, tls: tls)
        startPruning()
        return port
    }

    /// Removes expired records every ``DevServerConfiguration/pruneIntervalSeconds``, so memory follows
    /// the live set however long the server runs.
    private func startPruning() {
        let interval = configuration.pruneIntervalSeconds
        guard interval > 0 else { return }
        let store = self.store
        let log = self.log
        let now = pruningClock
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
                guard !Task.isCancelled else { return }
                do {
                    let removed = try await store.removeExpired(at: now())
                    if removed > 0 { log("pruned \(removed) expired records") }
                } catch {
                    log("pruning failed: \(error)")
                }
            }
        }
        pruning.withLock { $0 = task }
    }

    /// Finishes the requests under way and stops.
    public func stop() {
        pruning.withLock { $0?.cancel() }
        http.stop()
        postgresStore?.close()
    }

    /// The server's base URL.
    public var baseURL: String {
        "\(configuration.usesTLS ? "https" : "http")://\(configuration.host):\(listenPort)"
    }

    /// Whether a form post comes from this server's own pages: its `Origin`, when the browser sends one
    /// (all current ones do on a POST), is this server's, and its `Sec-Fetch-Site`, when sent, is
    /// `same-origin`. The form token is checked as well; this refuses a cross-site post before reading it.
    func isSameOrigin(_ request: HTTPRequest) -> Bool {
        let origins = request.headers.filter { $0.name.lowercased() == "origin" }.map(\.value)
        let sites = request.headers.filter { $0.name.lowercased() == "sec-fetch-site" }.map(\.value)
        guard origins.count <= 1, sites.count <= 1 else { return false }
        let scheme = configuration.usesTLS ? "https" : "http"
        let own = [baseURL] + (configuration.host == "127.0.0.1" ? ["\(scheme)://localhost:\(listenPort)"] : [])
        if let origin = origins.first, !own.contains(origin) {
            return false
        }
        if let site = sites.first, site != "same-origin" {
            return false
        }
        return true
    }

    /// The values of every cookie named `name` in the request's `Cookie` fields, in order.
    func cookieValues(named name: String, in request: HTTPRequest) -> [String] {
        request.headers.filter { $0.name.lowercased() == "cookie" }.flatMap { field in
            field.value.split(separator: ";").compactMap { pair -> String? in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { return nil }
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
    }

    /// The `iss` of its authorization responses (RFC 9207 §2): the base URL, which a client that knows
    /// the server it started at can compare.
    var issuer: String { baseURL }

    // MARK: Routing

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = await route(request)
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        log(
            "\(Self.loggable(request.method)) \(Self.loggable(request.path)) \(response.status) "
                + "\(String(format: "%.1f", milliseconds)) ms"
        )
        return response
    }

    /// `text` as one log token: every byte outside visible ASCII, and `%`, percent-encoded — libmicrohttpd
    /// hands over the path decoded, and a `%0a` in it must not start a forged log line.
    static func loggable(_ text: String) -> String {
        var shown = ""
        for byte in text.utf8 {
            if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") {
                shown.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                shown += String(format: "%%%02X", byte)
            }
        }
        return shown
    }

    private func route(_ request: HTTPRequest) async -> HTTPResponse {
        if let conformance, request.path.hasPrefix("/conformance/") {
            let answer = await conformance.handle(
                method: request.method,
                path: request.path,
                headers: HeaderFields(request.headers),
                body: request.body
            )
            return .json(answer.status, answer.body)
        }
        switch (request.method, request.path) {
        case (_, "/api/v1/oauth/ios-session"):
            return await iosSession(request)
        case ("GET", "/oauth/authorize"):
            return await authorizePage(request)
        case ("POST", "/oauth/authorize"):
            return await authorizeDecision(request)
        case ("GET", "/studio"):
            return await studio(request)
        case ("POST", "/studio/sign-out"):
            return await signOut(request)
        case ("GET", "/api/v1/me"):
            return await me(request)
        case ("GET", "/account"):
            return await account(request)
        case ("POST", "/account/revoke"):
            return await revoke(request)
        case ("GET", "/"):
            return home()
        case ("GET", "/try"):
            return startTry(request)
        case ("GET", "/try/callback"):
            return await finishTry(request)
        default:
            return .html(404, HTML.page(title: "Not found", "<p>No page here.</p>"))
        }
    }

    /// `POST /api/v1/oauth/ios-session`: the engine, untouched — the control API's world's engine while
    /// the control API is on, with the peer address the request names in its peer field.
    private func iosSession(_ request: HTTPRequest) async -> HTTPResponse {
        var engine = self.engine
        var peerAddress = request.peerAddress
        var headers = HeaderFields(request.headers)
        if let conformance {
            engine = conformance.engine
            if let override = ConformanceControl.peerOverride(in: headers) {
                peerAddress = override
            }
            headers = HeaderFields(
                request.headers.filter {
                    $0.name.caseInsensitiveCompare(ConformanceControl.peerField) != .orderedSame
                }
            )
        }
        let response = await engine.handle(
            request: EndpointRequest(
                method: request.method,
                headers: headers,
                body: request.body,
                peerAddress: peerAddress
            )
        )
        var fields = response.headers.fields.map { ($0.name, $0.value) } + HTTPResponse.common
        if defects.dropsCacheControl {
            fields.removeAll { $0.0 == "Cache-Control" }
        }
        return HTTPResponse(status: response.status, headers: fields, body: response.body)
    }

    /// The stores of the control API's worlds: in memory, or a PostgreSQL schema of their own
    /// (`tilecast_conformance`), emptied for every world.
    private static func conformanceStoreFactory(
        _ store: DevServerConfiguration.Store
    ) -> ConformanceControl.StoreFactory {
        switch store {
        case .memory:
            return { clients in InMemoryGrantStore(clients: clients) }
        case .postgres(let databaseURL):
            return { clients in
                let store = PostgresGrantStore(
                    clients: clients,
                    configuration: try PostgresConfiguration(databaseURL: databaseURL, schema: "tilecast_conformance")
                )
                try await store.migrate()
                try await store.deleteAllRecords()
                return store
            }
        }
    }

    private func home() -> HTTPResponse {
        .html(
            200,
            HTML.page(
                title: HTML.site,
                """
                <p>A local Tilecast auth server: the sign-in page the app opens, the endpoint it calls, and the
                pages around them. Not for production.</p>
                <p><a href="/try"><strong>Sign in as the app would</strong></a> — this page plays the app: it
                makes the PKCE pair and state, opens the sign-in page, takes the code, calls the endpoint and
                shows what comes back.</p>
                <ul>
                <li><a href="/studio">Studio</a>: who your session cookie signs in.</li>
                <li><a href="/account">Accounts and grants</a>: every sign-in, with a revoke button.</li>
                <li><code>POST /api/v1/oauth/ios-session</code>: the endpoint; <code>GET /api/v1/me</code>:
                the native API, with a bearer token.</li>
                </ul>
                <p>Demo accounts: \(Self.demoAccounts.map { "<code>\(HTML.escape($0.id.rawValue))</code>" }.joined(separator: ", ")).</p>
                """
            )
        )
    }
}

extension PostgresGrantStore: @retroactive ConformanceStore {
    public func recordTexts() async throws -> [String] {
        try await dumpRecords()
    }

    public func shutDown() async {
        close()
    }
}
