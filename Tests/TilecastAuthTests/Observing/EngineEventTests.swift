// SPDX-License-Identifier: Apache-2.0

import Testing
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

/// The events the engine reports, exactly: which, in what order, about what.
struct EngineEventTests {
    @Test("A code exchange reports its grant, with the code's client and account, then the session it starts")
    func exchangeEvents() async throws {
        let harness = try Harness()
        #expect(try await harness.signIn().status == 200)
        let grant = try #require(harness.memory.snapshot().grants.keys.first)
        let events = harness.observer.events
        #expect(events.map(\.kind) == [.grantCreated, .sessionStarted])
        #expect(events.first?.grant == grant)
        #expect(events.first?.client == .tilecastIOS)
        #expect(events.first?.account == Harness.account)
        #expect(events.last?.grant == grant)
    }

    @Test(
        "A grant made outside the endpoint reports itself, and its session only when one starts",
        arguments: [true, false]
    )
    func createGrantEvents(startsSession: Bool) async throws {
        let harness = try Harness()
        let issued = try await harness.engine.createGrant(
            account: "account-8",
            client: "tilecast-web",
            scope: "profile",
            startsSession: startsSession
        )
        let events = harness.observer.events
        #expect(events.map(\.kind) == (startsSession ? [.grantCreated, .sessionStarted] : [.grantCreated]))
        #expect(events.first?.grant == issued.grant)
        #expect(events.first?.client == "tilecast-web")
        #expect(events.first?.account == "account-8")
    }

    @Test("Events are built for every observer but the default no-op one")
    func reportsEvents() throws {
        func engine(observing observer: (any SecurityEventObserver)?) throws -> AuthEngine {
            let store = InMemoryGrantStore(clients: Harness.clients)
            let accounts = InMemoryAccountDirectory(activeAccounts: [Harness.account])
            guard let observer else { return try AuthEngine(store: store, accounts: accounts) }
            return try AuthEngine(store: store, accounts: accounts, observer: observer)
        }
        #expect(try !engine(observing: nil).reportsEvents)
        #expect(try !engine(observing: NoOpSecurityEventObserver()).reportsEvents)
        #expect(try engine(observing: RecordingObserver()).reportsEvents)
        #expect(
            try engine(observing: SamplingSecurityEventObserver(wrapping: NoOpSecurityEventObserver())).reportsEvents
        )
    }
}
