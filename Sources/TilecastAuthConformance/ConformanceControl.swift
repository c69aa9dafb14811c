// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
public import TilecastAuth

/// The control API of `Docs/Conformance/ControlAPI.md`, ready to embed in a Swift server: it holds the
/// current ``ConformanceWorld``, replaces it on `reset`, and answers the API's HTTP requests.
///
/// A server embeds it only behind a switch that is off by default, serves it on loopback only, and sends
/// its endpoint requests to ``engine`` — the current world's — instead of its own engine. The dev server's
/// `--conformance-control` is the example.
public final class ConformanceControl: Sendable {
    /// Makes the store of a fresh world: empty, holding these clients.
    public typealias StoreFactory = @Sendable ([Client]) async throws -> any ConformanceStore

    /// The API's path prefix; an operation's path is the prefix and its name.
    public static let pathPrefix = "/conformance/v1/"
    /// The field that carries a request's peer address to the endpoint in place of the connection's:
    /// an address, or `none` for a request without one.
    public static let peerField = "Tilecast-Conformance-Peer"
    /// The version of the API this implements.
    public static let version = 1

    private let token: [UInt8]
    private let makeStore: StoreFactory
    private let makeRandomSource: @Sendable () -> any RandomSource
    private let current: Mutex<ConformanceWorld>

    /// A control API guarded by `token` — at least 32 characters, such as 128 random bits in hex; the
    /// runner sends it as `Authorization: Bearer <token>` — starting
    /// with a fresh world of the default configuration. Each world mints its secrets from a source
    /// `randomSource` makes: the operating system's CSPRNG unless a test wants them reproducible.
    public init(
        token: String,
        randomSource: @escaping @Sendable () -> any RandomSource = { SystemRandomSource() },
        makeStore: @escaping StoreFactory
    ) async throws {
        guard token.utf8.count >= 32 else {
            throw TargetError("the control token must have at least 32 characters (128 bits as hex)")
        }
        self.token = Array(token.utf8)
        self.makeStore = makeStore
        makeRandomSource = randomSource
        let configuration = ScenarioConfiguration()
        let store = try await makeStore(ConformanceWorld.clients(for: configuration))
        current = Mutex(
            try ConformanceWorld(configuration: configuration, store: store, randomSource: randomSource())
        )
    }

    /// The current world.
    public var world: ConformanceWorld { current.withLock { $0 } }

    /// The current world's engine: where a server sends endpoint requests while the control API is on.
    public var engine: AuthEngine { world.engine }

    /// What a `reset` came to.
    public enum ResetOutcome: Sendable, Equatable {
        /// A fresh world with the configuration is in place.
        case ready
        /// The engine refused the configuration (a scenario with `configurationRefused` expects this).
        case configurationRefused(String)
        /// The store for the fresh world could not be made.
        case storeFailed(String)
    }

    /// Replaces the world with a fresh one: an empty store, the clock at ``ConformanceWorld/start``, every
    /// account active, nothing set to fail, and `overrides` applied to the default configuration. When the
    /// configuration is refused, the old world stays.
    public func reset(overrides: [String: ScenarioJSON]) async throws(ScenarioFormatError) -> ResetOutcome {
        let configuration = try ScenarioConfiguration(overrides: overrides)
        do {
            try configuration.engine.validate()
        } catch {
            return .configurationRefused("\(error)")
        }
        let store: any ConformanceStore
        do {
            store = try await makeStore(ConformanceWorld.clients(for: configuration))
        } catch {
            return .storeFailed("\(error)")
        }
        let fresh: ConformanceWorld
        do {
            fresh = try ConformanceWorld(configuration: configuration, store: store, randomSource: makeRandomSource())
        } catch {
            await store.shutDown()
            return .configurationRefused("\(error)")
        }
        let old = current.withLock { world in
            defer { world = fresh }
            return world
        }
        await old.store.shutDown()
        return .ready
    }

    /// What ``capabilities`` reports: everything, since this implements the whole API.
    public static var capabilities: ScenarioJSON {
        .object([
            "version": .number(Double(version)),
            "operations": .array(
                (["reset"] + ConformanceOperation.allCases.map(\.rawValue)).map(ScenarioJSON.string)
            ),
            "configuration": .array(ScenarioConfiguration.keys.sorted().map(ScenarioJSON.string)),
            "failNext": .array(ConformanceOperation.failableOperations.map(ScenarioJSON.string)),
            "peer": .bool(true),
        ])
    }

    /// The peer address a request names in ``peerField``: `.some(nil)` for `none`, `nil` when the field
    /// is absent (the connection's address stands).
    public static func peerOverride(in headers: HeaderFields) -> String?? {
        let values = headers.values(for: peerField)
        guard let value = values.first else { return nil }
        return value == "none" ? .some(nil) : value
    }

    // MARK: HTTP

    /// Answers one request to the API: `path` is the request's path (starting with ``pathPrefix``),
    /// `headers` its fields and `body` its JSON. Returns the status and the JSON body.
    public func handle(
        method: String,
        path: String,
        headers: HeaderFields,
        body: [UInt8]
    ) async -> (status: Int, body: String) {
        guard authorized(headers) else {
            return Self.error(401, "unauthorized", "send Authorization: Bearer <the token the server printed>")
        }
        guard path.hasPrefix(Self.pathPrefix) else {
            return Self.error(404, "unknownOperation", "the API lives under \(Self.pathPrefix)")
        }
        let name = String(path.dropFirst(Self.pathPrefix.count))
        guard name == "capabilities" || name == "reset" || ConformanceOperation(rawValue: name) != nil else {
            return Self.error(404, "unknownOperation", "no operation \(name)")
        }
        if name == "capabilities" {
            guard method == "GET" || method == "POST" else {
                return Self.error(405, "methodNotAllowed", "capabilities is GET or POST")
            }
            return (200, Self.capabilities.description)
        }
        guard method == "POST" else {
            return Self.error(405, "methodNotAllowed", "operations are POST")
        }
        let parameters: [String: ScenarioJSON]
        if body.isEmpty {
            parameters = [:]
        } else if let object = ScenarioJSON(data: Data(body))?.objectValue {
            parameters = object
        } else {
            return Self.error(400, "invalidParameters", "the body must be a JSON object")
        }
        do {
            if name == "reset" {
                try ScenarioReader(parameters, path: "reset").requireKeys(["configuration"])
                let overrides = try ScenarioReader(parameters, path: "reset").object("configuration") ?? [:]
                switch try await reset(overrides: overrides) {
                case .ready: return (200, "{}")
                case .configurationRefused(let message): return Self.error(422, "configurationRefused", message)
                case .storeFailed(let message): return Self.error(503, "storeFailed", message)
                }
            }
            guard let operation = ConformanceOperation(rawValue: name) else {
                return Self.error(404, "unknownOperation", "no operation \(name)")
            }
            if operation == .inspect {
                // A store that cannot be shown fails the check that needs it: never a 200.
                do {
                    return (200, try await world.inspect().description)
                } catch {
                    return Self.error(503, "inspectFailed", "\(error)")
                }
            }
            return (200, try await world.perform(operation, parameters).description)
        } catch {
            return Self.error(400, "invalidParameters", error.description)
        }
    }

    private func authorized(_ headers: HeaderFields) -> Bool {
        let values = headers.values(for: "Authorization")
        guard values.count == 1, values[0].hasPrefix("Bearer ") else { return false }
        let presented = Array(values[0].utf8.dropFirst(7))
        // Constant time in the token's content: every byte is compared whatever the earlier ones were.
        guard presented.count == token.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(presented, token) {
            difference |= left ^ right
        }
        return difference == 0
    }

    private static func error(_ status: Int, _ code: String, _ message: String) -> (status: Int, body: String) {
        (status, ScenarioJSON.object(["error": .string(code), "message": .string(message)]).description)
    }
}
