// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// The engine side of a model-based test: a fresh engine on an in-memory store, with a manual clock, a
/// seeded random source and a fault-injecting store.
struct ModelWorld {
    static let callback = "tilecast-ios://oauth/callback"
    static let webCallback = "https://studio.tilecast.test/oauth/callback"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    let memory = InMemoryGrantStore(clients: [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["tiles:read"]),
        Client(id: "tilecast-web", redirectURIs: [webCallback], allowedScopeTokens: ["tiles:read"]),
    ])
    let faults: FaultInjectingStore
    let clock = ManualTimeSource(start)
    let random = SeededRandomSource(seed: 0x0DE1)
    let accounts = InMemoryAccountDirectory(activeAccounts: ["account-0", "account-1"])
    let engine: AuthEngine

    init(leeway: Double) throws {
        faults = FaultInjectingStore(memory)
        engine = try AuthEngine(
            configuration: EngineConfiguration(refreshTokenReuseLeeway: .milliseconds(Int64(leeway * 1000))),
            store: faults,
            accounts: accounts,
            rateLimiter: InMemoryRateLimiter(capacity: 1_000_000),
            timeSource: clock,
            randomSource: random
        )
    }

    /// Sends a JSON body to the endpoint.
    func post(_ members: [String: String?], studioSession: Bool? = nil) async -> EndpointResponse {
        var fields = members.compactMap { name, value in value.map { "\"\(name)\":\"\($0)\"" } }
        if let studioSession {
            fields.append("\"studio_session\":\(studioSession)")
        }
        let body = "{" + fields.sorted().joined(separator: ",") + "}"
        return await engine.handle(
            request: EndpointRequest(
                method: "POST",
                headers: ["Content-Type": "application/json"],
                body: Array(body.utf8),
                peerAddress: "192.0.2.1"
            )
        )
    }
}
