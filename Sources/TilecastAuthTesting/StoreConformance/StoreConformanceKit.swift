// SPDX-License-Identifier: Apache-2.0

public import TilecastAuth

/// The conformance kit for `GrantStore` implementations: every operation's contract, expiry, revocation
/// cascades and concurrency — N concurrent redemptions or rotations give exactly one success.
///
/// Give it a factory for empty stores; each check gets a fresh one holding the clients it asks for.
/// `InMemoryGrantStore` passes it; so must every other implementation before it stores a real grant.
/// See `Docs/ImplementingAStore.md`.
public struct StoreConformanceKit: Sendable {
    /// Makes an empty store that knows `clients`.
    public typealias StoreFactory = @Sendable (_ clients: [Client]) async throws -> any GrantStore

    /// How many concurrent callers the concurrency checks use.
    public let concurrency: Int
    private let makeStore: StoreFactory

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - concurrency: Concurrent callers in the concurrency checks; 50 by default.
    ///   - makeStore: Makes an empty store that knows the given clients.
    public init(concurrency: Int = 50, makeStore: @escaping StoreFactory) {
        self.concurrency = concurrency
        self.makeStore = makeStore
    }

    /// Runs one check against a fresh store.
    ///
    /// - Throws: ``StoreConformanceFailure`` when the store breaks the contract, or the store's own error.
    public func run(_ check: StoreConformanceCheck) async throws {
        let store = try await makeStore(StoreFixture.clients)
        try await check.body(StoreConformanceContext(store: store, check: check.name, concurrency: concurrency))
    }

    /// Runs every check and returns the failures; empty when the store conforms.
    public func runAll() async -> [StoreConformanceFailure] {
        var failures: [StoreConformanceFailure] = []
        for check in StoreConformanceCheck.all {
            do {
                try await run(check)
            } catch let failure as StoreConformanceFailure {
                failures.append(failure)
            } catch {
                failures.append(StoreConformanceFailure(check: check.name, message: "threw \(error)"))
            }
        }
        return failures
    }
}
