// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// The engine side of a model-based test: fresh engines on one in-memory store, with a manual clock, a
/// seeded random source and a fault-injecting store — one engine reading every record, or several, each
/// behind its own ``RememberingStore``, as instances on one database are.
struct ModelWorld {
    static let callback = "tilecast-ios://oauth/callback"
    static let webCallback = "https://studio.tilecast.test/oauth/callback"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    let memory = InMemoryGrantStore(clients: [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["tiles:read"]),
        Client(id: "tilecast-web", redirectURIs: [webCallback], allowedScopeTokens: ["tiles:read"]),
    ])
    /// The faults every engine's calls meet: a remembering wrapper sits in front of it, so that a write
    /// that fails is remembered by none.
    let faults: FaultInjectingStore
    let clock = ManualTimeSource(start)
    let random = SeededRandomSource(seed: 0x0DE1)
    let accounts = InMemoryAccountDirectory(activeAccounts: ["account-0", "account-1"])
    /// The engines, one per instance of the deployment.
    let engines: [AuthEngine]
    /// Each remembering instance's store; none in a single reading instance.
    let rememberingStores: [RememberingStore]

    init(leeway: Double, deployment: ModelChecker.Deployment) throws {
        let faults = FaultInjectingStore(memory)
        let remembering: [RememberingStore] =
            switch deployment {
            case .single: []
            case .remembering(let instances): (0..<max(1, instances)).map { _ in RememberingStore(faults) }
            }
        let stores: [any GrantStore] = remembering.isEmpty ? [faults] : remembering
        let (clock, accounts, random) = (self.clock, self.accounts, self.random)
        self.faults = faults
        self.rememberingStores = remembering
        self.engines = try stores.map { store in
            try AuthEngine(
                configuration: EngineConfiguration(refreshTokenReuseLeeway: .milliseconds(Int64(leeway * 1000))),
                store: store,
                accounts: accounts,
                rateLimiter: InMemoryRateLimiter(capacity: 1_000_000),
                timeSource: clock,
                randomSource: random
            )
        }
    }

    /// The engine of `instance`, counted round the deployment's instances.
    func engine(_ instance: Int) -> AuthEngine {
        engines[instance % engines.count]
    }

    /// Sends a JSON body to the endpoint of `instance`.
    func post(_ members: [String: String?], studioSession: Bool? = nil, instance: Int) async -> EndpointResponse {
        var fields = members.compactMap { name, value in value.map { "\"\(name)\":\"\($0)\"" } }
        if let studioSession {
            fields.append("\"studio_session\":\(studioSession)")
        }
        let body = "{" + fields.sorted().joined(separator: ",") + "}"
        return await engine(instance).handle(
            request: EndpointRequest(
                method: "POST",
                headers: ["Content-Type": "application/json"],
                body: Array(body.utf8),
                peerAddress: "192.0.2.1"
            )
        )
    }
}
