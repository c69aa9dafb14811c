// SPDX-License-Identifier: Apache-2.0

import Foundation
public import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// The stores of a ``ModelChecker/Deployment/stores(_:make:)`` deployment: one per instance, all on the
/// same records (as instances on one database), and a way to read every record as it stands.
public struct ModelStores: Sendable {
    /// Each instance's store.
    public var instances: [any GrantStore]
    /// Every record the stores hold now.
    public var snapshot: @Sendable () async throws -> InMemoryGrantStore.Snapshot
    /// How many lookups the instances have answered from what they remember of their own writes, and
    /// how many of those records a write found changed since.
    public var rememberedRecords: @Sendable () -> (used: Int, foundStale: Int)
    /// Releases what the stores hold on to (a schema, connections); called once the run is over.
    public var close: @Sendable () async -> Void

    public init(
        instances: [any GrantStore],
        snapshot: @escaping @Sendable () async throws -> InMemoryGrantStore.Snapshot,
        rememberedRecords: @escaping @Sendable () -> (used: Int, foundStale: Int) = { (0, 0) },
        close: @escaping @Sendable () async -> Void = {}
    ) {
        self.instances = instances
        self.snapshot = snapshot
        self.rememberedRecords = rememberedRecords
        self.close = close
    }
}

/// The engine side of a model-based test: fresh engines, with a manual clock, a seeded random source and
/// fault-injecting stores — one engine reading every record of an in-memory store; several, each behind
/// its own ``RememberingStore``, on one in-memory store; or one per store a test made (PostgreSQL
/// instances on one schema, say).
struct ModelWorld {
    static let callback = "tilecast-ios://oauth/callback"
    static let webCallback = "https://studio.tilecast.test/oauth/callback"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let clients = [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["tiles:read"]),
        Client(id: "tilecast-web", redirectURIs: [webCallback], allowedScopeTokens: ["tiles:read"]),
    ]

    /// The faults the engines' calls meet: one store in front of an in-memory store, which every
    /// instance's calls reach (a remembering wrapper sits in front of it, so that a write that fails is
    /// remembered by none); or one in front of each store a test made.
    let faults: [FaultInjectingStore]
    let clock = ManualTimeSource(start)
    let random = SeededRandomSource(seed: 0x0DE1)
    let accounts = InMemoryAccountDirectory(activeAccounts: ["account-0", "account-1"])
    /// Rotations that reached the stores, whatever their outcome: a burst's beyond its successes were
    /// superseded by another request's, or failed.
    let rotationAttempts = LockedValue(0)
    /// The engines, one per instance of the deployment.
    let engines: [AuthEngine]
    /// A store of the records without faults, for what the checker reads and prunes itself.
    let records: any GrantStore
    private let stores: ModelStores

    init(leeway: Double, deployment: ModelChecker.Deployment) async throws {
        let engineStores: [any GrantStore]
        switch deployment {
        case .single, .remembering:
            let memory = InMemoryGrantStore(clients: Self.clients)
            let shared = FaultInjectingStore(memory)
            let remembering: [RememberingStore] =
                if case .remembering(let instances) = deployment {
                    (0..<max(1, instances)).map { _ in RememberingStore(shared) }
                } else { [] }
            faults = [shared]
            engineStores = remembering.isEmpty ? [shared] : remembering
            stores = ModelStores(
                instances: [memory],
                snapshot: { memory.snapshot() },
                rememberedRecords: {
                    (
                        remembering.map(\.rememberedRecordsUsed).reduce(0, +),
                        remembering.map(\.rememberedRecordsFoundStale).reduce(0, +)
                    )
                }
            )
        case .stores(_, let make):
            stores = try await make(Self.clients)
            faults = stores.instances.map { FaultInjectingStore($0) }
            engineStores = faults
        }
        records = stores.instances[0]
        // Every rotation lets the other tasks run between its request's first look at the token and its
        // write, so that a burst's requests interleave there — in memory, where nothing else waits, they
        // would mostly run one after another.
        let attempts = rotationAttempts
        for store in faults {
            store.beforeEachRotation { _ in
                attempts.withLock { $0 += 1 }
                await Task.yield()
            }
        }
        let (clock, accounts, random) = (self.clock, self.accounts, self.random)
        self.engines = try engineStores.map { store in
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

    /// The fault-injecting store the calls of `instance` meet.
    func faults(of instance: Int) -> FaultInjectingStore {
        faults[instance % faults.count]
    }

    /// Every record as it stands.
    func snapshot() async throws -> InMemoryGrantStore.Snapshot {
        try await stores.snapshot()
    }

    /// How many lookups the instances answered from memory, and how many of those records a write found
    /// changed since.
    var rememberedRecords: (used: Int, foundStale: Int) { stores.rememberedRecords() }

    /// Releases the stores.
    func close() async {
        await stores.close()
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
