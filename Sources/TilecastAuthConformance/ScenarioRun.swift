// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// One scenario being run: a fresh engine on an in-memory store with a manual clock, and the variables,
/// secrets and failures gathered along the way.
final class ScenarioRun {
    static let defaultAccount = "alice"
    static let defaultPeer = "192.0.2.1"
    static let defaultScope = "tiles:read profile"

    let scenario: Scenario
    let memory: InMemoryGrantStore
    let faults: FaultInjectingStore
    /// The instant every scenario starts at; `setClock` counts from it.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    let clock = ManualTimeSource(ScenarioRun.start)
    let random = SeededRandomSource(seed: 0xC0FFEE)
    let accounts = ScenarioAccountDirectory()
    let limiter: ScenarioRateLimiter
    let events = ScenarioEventLog()
    let engine: AuthEngine
    var variables = ScenarioVariables()
    /// Every secret the run has seen: codes, verifiers, tokens, session ids.
    var secrets: [String] = []

    init(_ scenario: Scenario) throws(ConfigurationError) {
        self.scenario = scenario
        let configuration = scenario.configuration.engine
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
        if let index = clients.firstIndex(where: { $0.id == configuration.servedClient }) {
            clients[index].redirectURIs.append(configuration.callbackURI)
        } else {
            clients.append(
                Client(
                    id: configuration.servedClient,
                    redirectURIs: [configuration.callbackURI],
                    allowedScopeTokens: ["tiles:read", "tiles:write", "profile"]
                )
            )
        }
        memory = InMemoryGrantStore(clients: clients)
        faults = FaultInjectingStore(memory)
        limiter = ScenarioRateLimiter(
            capacity: scenario.configuration.rateLimit.capacity,
            refillSeconds: scenario.configuration.rateLimit.refillSeconds
        )
        engine = try AuthEngine(
            configuration: configuration,
            store: faults,
            accounts: accounts,
            rateLimiter: limiter,
            observer: events,
            timeSource: clock,
            randomSource: random
        )
    }

    /// Runs every step and returns how the engine differed from the scenario.
    func execute() async -> [String] {
        var failures: [String] = []
        for (index, step) in scenario.steps.enumerated() {
            let label = "step \(index + 1) (\(step.action.kind.rawValue))"
            do {
                let parameters = try variables.substitute(.object(step.action.parameters)).objectValue ?? [:]
                let before = memory.snapshot()
                let result = try await perform(step.action.kind, parameters)
                let after = memory.snapshot()
                let expectation = try variables.substitute(.object(step.expectation)).objectValue ?? [:]
                let mismatches = check(
                    expectation,
                    kind: step.action.kind,
                    result: result,
                    storeChanged: before != after
                )
                failures += mismatches.map { "\(label): \($0)" }
                for capture in step.captures {
                    guard let value = result.value(at: capture.path) else {
                        failures.append("\(label): capture \(capture.name): nothing at \(capture.path) in \(result)")
                        continue
                    }
                    variables.set(capture.name, value)
                }
                if !mismatches.isEmpty {
                    // Later steps build on this one; what they report would only repeat it.
                    break
                }
            } catch {
                failures.append("\(label): \(error)")
                break
            }
        }
        return failures.map { SecretShortener(extraSecrets: secrets).shorten($0) }
    }
}
