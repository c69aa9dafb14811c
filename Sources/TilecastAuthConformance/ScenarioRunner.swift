// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// Runs conformance scenarios against the engine with the in-memory store, each on a fresh engine.
public struct ScenarioRunner: Sendable {
    public init() {}

    /// Runs one scenario.
    public func run(_ scenario: Scenario) async -> ScenarioResult {
        let failures: [String]
        do {
            let run = try ScenarioRun(scenario)
            if scenario.configurationRefused {
                failures = ["configuration: expected it to be refused, but the engine accepted it"]
            } else {
                failures = await run.execute()
            }
        } catch {
            failures = scenario.configurationRefused ? [] : ["configuration refused: \(error)"]
        }
        return ScenarioResult(name: scenario.name, source: scenario.source, rules: scenario.rules, failures: failures)
    }
}
