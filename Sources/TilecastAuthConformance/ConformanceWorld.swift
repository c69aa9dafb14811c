// SPDX-License-Identifier: Apache-2.0

public import Foundation
import Synchronization
public import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// A store the conformance world can run on and look inside.
///
/// `storeUnchanged` and `secretsProtected` need to see every record; nothing else in the world does.
public protocol ConformanceStore: GrantStore {
    /// Every record the store holds, one text each, sorted, so that two stores holding the same records
    /// give the same list. A secret stored in the clear shows up here.
    func recordTexts() async throws -> [String]
    /// Releases what the store holds open (connections); called when a newer world replaces this one.
    func shutDown() async
}

/// The world a scenario runs in: the engine on a store that can be made to fail, with a clock that only
/// moves when told, the demo accounts, the scenarios' rate limiter and a log of security events — and
/// every control operation of `Docs/Conformance/ControlAPI.md` on it.
///
/// The in-process runner and a server's control API (the dev server's `--conformance-control`) use the
/// same world, so a scenario means the same thing in process and over HTTP.
public final class ConformanceWorld: Sendable {
    /// The instant every world starts at (2027-01-15 08:00:00 UTC); `setClock` counts from it.
    public static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let defaultAccount = "alice"
    /// How far, in seconds, the clock may be moved at once or set from the start: about 31 years, beyond
    /// every lifetime the specification allows and well inside what a date can hold.
    static let clockRange = 1e9
    static let defaultScope = "tiles:read profile"

    /// The engine; endpoint requests go straight to it. `serveClient` replaces it with one that serves
    /// another client on the same store.
    public var engine: AuthEngine { currentEngine.withLock { $0 } }
    private let currentEngine: Mutex<AuthEngine>
    let store: any ConformanceStore
    let faults: FaultInjectingStore
    let clock = ManualTimeSource(ConformanceWorld.start)
    let random: ForwardingRandomSource
    let accounts = ScenarioAccountDirectory()
    let limiter: ScenarioRateLimiter
    let events = ScenarioEventLog()

    /// The clients every world registers: `tilecast-ios`, `tilecast-web` and `tilecast-cli`, with the
    /// configuration's served client and callback added.
    public static func clients(for configuration: ScenarioConfiguration) -> [Client] {
        let engine = configuration.engine
        var clients = [
            Client(
                id: .tilecastIOS,
                redirectURIs: ["tilecast-ios://oauth/callback"],
                allowedScopeTokens: ["tiles:read", "tiles:write", "profile"]
            ),
            Client(
                id: "tilecast-web",
                redirectURIs: ["https://studio.tilecast.test/oauth/callback"],
                allowedScopeTokens: ["tiles:read", "tiles:write", "profile"]
            ),
            Client(id: "tilecast-cli", redirectURIs: ["http://127.0.0.1/callback"], allowedScopeTokens: ["tiles:read"]),
        ]
        if let index = clients.firstIndex(where: { $0.id == engine.servedClient }) {
            clients[index].redirectURIs.append(engine.callbackURI)
        } else {
            clients.append(
                Client(
                    id: engine.servedClient,
                    redirectURIs: [engine.callbackURI],
                    allowedScopeTokens: ["tiles:read", "tiles:write", "profile"]
                )
            )
        }
        return clients
    }

    /// A fresh world on `store`, which must be empty and hold ``clients(for:)``, minting its secrets from
    /// `randomSource`. Throws when the engine refuses the configuration.
    public init(
        configuration: ScenarioConfiguration,
        store: any ConformanceStore,
        randomSource: any RandomSource = SystemRandomSource()
    ) throws(ConfigurationError) {
        self.store = store
        random = ForwardingRandomSource(base: randomSource)
        faults = FaultInjectingStore(store, readsWhenAReadFailureWaits: true)
        limiter = ScenarioRateLimiter(
            capacity: configuration.rateLimit.capacity,
            refillSeconds: configuration.rateLimit.refillSeconds
        )
        currentEngine = Mutex(
            try Self.makeEngine(configuration.engine, faults, accounts, limiter, events, clock, random)
        )
    }

    private static func makeEngine(
        _ configuration: EngineConfiguration,
        _ faults: FaultInjectingStore,
        _ accounts: ScenarioAccountDirectory,
        _ limiter: ScenarioRateLimiter,
        _ events: ScenarioEventLog,
        _ clock: ManualTimeSource,
        _ random: ForwardingRandomSource
    ) throws(ConfigurationError) -> AuthEngine {
        try AuthEngine(
            configuration: configuration,
            store: faults,
            accounts: accounts,
            rateLimiter: limiter,
            observer: events,
            timeSource: clock,
            randomSource: random
        )
    }

    /// From now on, the endpoint serves `client` with callback `callbackURI`, on the same store, clock,
    /// accounts and rate limiter: another client's endpoint on the same data, as a server with a web and
    /// an iOS endpoint has. The client must be registered with that redirect URI.
    private func serveClient(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        guard let client = try reader.string("client"), let callbackURI = try reader.string("callbackUri") else {
            throw ScenarioFormatError(path: "serveClient", message: "needs client and callbackUri")
        }
        let registered: Client?
        do {
            registered = try await store.client(ClientID(client))
        } catch {
            return .object(["error": .string("\(error)")])
        }
        guard let registered, registered.redirectURIs.contains(callbackURI) else {
            return .object(["error": .string("\(client) is not registered with the redirect URI \(callbackURI)")])
        }
        var configuration = engine.configuration
        configuration.servedClient = ClientID(client)
        configuration.callbackURI = callbackURI
        do {
            let served = try Self.makeEngine(configuration, faults, accounts, limiter, events, clock, random)
            currentEngine.withLock { $0 = served }
        } catch {
            return .object(["error": .string("\(error)")])
        }
        return .object([:])
    }

    /// What `inspect` returns: every stored record and every security event, as text.
    public func inspect() async throws -> ScenarioJSON {
        let records = try await store.recordTexts()
        return .object([
            "records": .array(records.map(ScenarioJSON.string)),
            "events": .array(events.printed.map(ScenarioJSON.string)),
        ])
    }

    /// Performs one control operation other than `reset` and returns its result document.
    public func perform(
        _ operation: ConformanceOperation,
        _ parameters: [String: ScenarioJSON]
    ) async throws(ScenarioFormatError) -> ScenarioJSON {
        let reader = ScenarioReader(parameters, path: operation.rawValue)
        try reader.requireKeys(operation.parameters)
        switch operation {
        case .issueCode:
            return await issueCode(reader)
        case .insertCode:
            return try await insertCode(reader)
        case .advanceClock:
            guard let seconds = try reader.number("seconds"), seconds >= 0, seconds <= Self.clockRange else {
                throw ScenarioFormatError(path: "advanceClock.seconds", message: "must be a number from 0 to 10⁹")
            }
            clock.advance(by: seconds)
            return .object([:])
        case .setClock:
            guard let seconds = try reader.number("seconds"), abs(seconds) <= Self.clockRange else {
                throw ScenarioFormatError(path: "setClock.seconds", message: "must be a number from -10⁹ to 10⁹")
            }
            clock.set(Self.start.addingTimeInterval(seconds))
            return .object([:])
        case .revokeGrant:
            return try await revokeGrant(reader)
        case .revokeAllGrants:
            let account = AccountID(try reader.string("account") ?? Self.defaultAccount)
            return await backend {
                .object(["count": .number(Double(try await self.engine.revokeAllGrants(of: account).count))])
            }
        case .signOut:
            return try await signOut(reader)
        case .authenticateSession:
            if let header = try reader.string("cookieHeader") {
                return await backend {
                    Self.document(for: try await self.engine.authenticateSession(headers: ["Cookie": header]))
                }
            }
            let value = try reader.string("sessionId") ?? ""
            return await backend { Self.document(for: try await self.engine.authenticateSession(cookieValue: value)) }
        case .authenticateBearer:
            let accessToken = try reader.string("accessToken") ?? ""
            let header = try reader.string("authorization") ?? "Bearer \(accessToken)"
            return await backend { Self.document(for: try await self.engine.authenticateBearer(authorization: header)) }
        case .setAccount:
            guard let account = try reader.string("account"), let active = try reader.bool("active") else {
                throw ScenarioFormatError(path: "setAccount", message: "needs account and active")
            }
            accounts.setActive(active, AccountID(account))
            return .object([:])
        case .failNextSessionStart:
            faults.failNext(anyOf: [.redeemCode, .replaceSession])
            return .object([:])
        case .failNext:
            try failNext(reader)
            return .object([:])
        case .createGrant:
            return try await createGrant(reader)
        case .removeExpired:
            return await backend {
                .object(["removed": .number(Double(try await self.faults.removeExpired(at: self.clock.now())))])
            }
        case .inspect:
            return await backend { try await self.inspect() }
        case .serveClient:
            return try await serveClient(reader)
        }
    }

    // MARK: Codes

    private func issueCode(_ reader: ScenarioReader) async -> ScenarioJSON {
        do {
            let verifier = try reader.string("verifier") ?? CodeChallenge.makeVerifier(using: random)
            let challenge =
                reader.members["challenge"] == nil
                ? CodeChallenge.s256(for: verifier).value : try reader.string("challenge")
            let method = reader.members["challengeMethod"] == nil ? "S256" : try reader.string("challengeMethod")
            let issued = try await engine.issueCode(
                account: AccountID(try reader.string("account") ?? Self.defaultAccount),
                client: ClientID(try reader.string("client") ?? engine.configuration.servedClient.rawValue),
                redirectURI: try reader.string("redirectUri") ?? engine.configuration.callbackURI,
                codeChallenge: challenge,
                codeChallengeMethod: method,
                scope: try reader.string("scope") ?? Self.defaultScope
            )
            return .object([
                "code": .string(issued.code.unredactedValue),
                "verifier": .string(verifier),
                "challenge": challenge.map(ScenarioJSON.string) ?? .null,
            ])
        } catch let error as IssuanceError {
            return .object([
                "error": .string(error.oauthErrorCode.description), "mayRedirect": .bool(error.mayRedirect),
            ])
        } catch {
            return .object(["error": .string("\(error)")])
        }
    }

    private func insertCode(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let verifier = try reader.string("verifier") ?? CodeChallenge.makeVerifier(using: random)
        var challenge: CodeChallenge?
        if reader.members["challenge"] == nil {
            challenge = CodeChallenge.s256(for: verifier)
        } else if let value = try reader.string("challenge") {
            let method = reader.members["challengeMethod"] == nil ? "S256" : try reader.string("challengeMethod")
            challenge = method.map { CodeChallenge(method: CodeChallenge.Method(rawValue: $0), value: value) }
        }
        guard let scope = Scope(try reader.string("scope") ?? Self.defaultScope) else {
            throw ScenarioFormatError(path: "insertCode.scope", message: "is not a valid scope")
        }
        let code = OpaqueToken.mint(.authorizationCode, using: random)
        let now = clock.now()
        let record = AuthorizationCode(
            digest: code.digest,
            client: ClientID(try reader.string("client") ?? engine.configuration.servedClient.rawValue),
            account: AccountID(try reader.string("account") ?? Self.defaultAccount),
            redirectURI: try reader.string("redirectUri") ?? engine.configuration.callbackURI,
            scope: scope,
            challenge: challenge,
            issuedAt: now,
            expiresAt: now.addingTimeInterval(try reader.number("lifetime") ?? 60)
        )
        return await backend {
            try await self.faults.insertCode(record)
            return .object(["code": .string(code.unredactedValue), "verifier": .string(verifier)])
        }
    }

    // MARK: Grants

    private func revokeGrant(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let grant: GrantID?
        do {
            if let value = try reader.string("refreshToken") {
                grant =
                    try await OpaqueToken(presented: value, as: .refreshToken).asyncMap {
                        try await self.store.refreshToken($0.digest)?.grant.id
                    } ?? nil
            } else if let value = try reader.string("accessToken") {
                grant =
                    try await OpaqueToken(presented: value, as: .accessToken).asyncMap {
                        try await self.store.accessToken($0.digest)?.grant.id
                    } ?? nil
            } else if let value = try reader.string("sessionId") {
                grant =
                    try await OpaqueToken(presented: value, as: .studioSession).asyncMap {
                        try await self.store.session($0.digest)?.grant.id
                    } ?? nil
            } else {
                throw ScenarioFormatError(path: "revokeGrant", message: "needs refreshToken, accessToken or sessionId")
            }
        } catch let error as ScenarioFormatError {
            throw error
        } catch {
            return .object(["error": .string("\(error)")])
        }
        guard let grant else { return .object(["outcome": .string("notFound")]) }
        return await backend {
            switch try await self.engine.revokeGrant(grant) {
            case .revoked: .object(["outcome": .string("revoked")])
            case .alreadyRevoked: .object(["outcome": .string("alreadyRevoked")])
            case .notFound: .object(["outcome": .string("notFound")])
            }
        }
    }

    private func signOut(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let sessionID = try reader.string("sessionId")
        let cookieHeader = try reader.string("cookieHeader")
        let token = try reader.string("token")
        let client = ClientID(try reader.string("client") ?? engine.configuration.servedClient.rawValue)
        return await backend {
            let outcome: SignOutOutcome
            if let sessionID {
                outcome = try await self.engine.signOut(sessionCookieValue: sessionID)
            } else if let cookieHeader {
                outcome = try await self.engine.signOut(headers: ["Cookie": cookieHeader])
            } else {
                outcome = try await self.engine.signOut(token: token ?? "", client: client)
            }
            switch outcome {
            case .signedOut(let grant):
                return .object(["outcome": .string("signedOut"), "grant": .string(grant.description)])
            case .notSignedIn: return .object(["outcome": .string("notSignedIn")])
            }
        }
    }

    private func createGrant(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let account = AccountID(try reader.string("account") ?? Self.defaultAccount)
        let client = ClientID(try reader.string("client") ?? "")
        let scope = try reader.string("scope") ?? "tiles:read"
        let session = try reader.bool("session") ?? false
        do {
            let issued = try await engine.createGrant(
                account: account,
                client: client,
                scope: scope,
                startsSession: session
            )
            var result: [String: ScenarioJSON] = [
                "grant": .string(issued.grant.description),
                "accessToken": .string(issued.credential.accessToken.unredactedValue),
                "refreshToken": .string(issued.credential.refreshToken.unredactedValue),
            ]
            if let cookie = issued.cookie {
                result["sessionId"] = SetCookieField.parse(cookie.headerValue).value(at: "value") ?? .null
            }
            return .object(result)
        } catch {
            return .object(["error": .string(error.oauthErrorCode.description)])
        }
    }

    private func failNext(_ reader: ScenarioReader) throws(ScenarioFormatError) {
        let name = try reader.string("operation") ?? ""
        switch name {
        case "accountDirectory": accounts.failNext()
        case "rateLimiter": limiter.failNext()
        default:
            guard ConformanceOperation.failableOperations.contains(name),
                let operation = FaultInjectingStore.Operation(rawValue: name)
            else {
                throw ScenarioFormatError(
                    path: "failNext.operation",
                    message: "must be one of \(ConformanceOperation.failableOperations.joined(separator: ", "))"
                )
            }
            faults.failNext(operation)
        }
    }

    /// Runs a lifecycle call, turning a backend error into `{"error": …}`.
    private func backend(_ body: () async throws -> ScenarioJSON) async -> ScenarioJSON {
        do {
            return try await body()
        } catch {
            return .object(["error": .string("\(error)")])
        }
    }

    static func document(for authentication: Authentication) -> ScenarioJSON {
        switch authentication {
        case .authenticated(let who):
            .object([
                "authenticated": .bool(true),
                "account": .string(who.account.rawValue),
                "client": .string(who.client.rawValue),
                "scope": .string(who.scope.rawValue),
            ])
        case .unauthenticated(let failure):
            .object(["authenticated": .bool(false), "failure": .string("\(failure)")])
        }
    }
}

extension InMemoryGrantStore: ConformanceStore {
    public func recordTexts() async throws -> [String] {
        let snapshot = snapshot()
        var texts: [String] = []
        func add(_ record: some Any) {
            var text = ""
            dump(record, to: &text)
            texts.append(text)
        }
        snapshot.codes.values.forEach(add)
        snapshot.grants.values.forEach(add)
        snapshot.refreshTokens.values.forEach(add)
        snapshot.accessTokens.values.forEach(add)
        snapshot.sessions.values.forEach(add)
        for (account, revokedAt) in snapshot.accountRevocations {
            add((account: account, revokedAt: revokedAt))
        }
        return texts.sorted()
    }

    public func shutDown() async {}
}

extension Optional {
    /// `map` with an asynchronous, throwing transform.
    fileprivate func asyncMap<Result>(_ transform: (Wrapped) async throws -> Result) async rethrows -> Result? {
        guard let wrapped = self else { return nil }
        return try await transform(wrapped)
    }
}

/// A random source that forwards to another, whatever its type: the world's, handed to the generic
/// minting functions.
struct ForwardingRandomSource: RandomSource {
    let base: any RandomSource

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        base.fill(buffer)
    }
}
