// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// Runs conformance scenarios on a target — TilecastAuth's engine in process, or a server over HTTP —
/// each on a fresh world.
public struct ScenarioRunner: Sendable {
    private let target: any ConformanceTarget
    private let capabilities: TargetCapabilities

    /// A runner for `target`, whose capabilities it reads once.
    public init(target: any ConformanceTarget) async throws(TargetError) {
        self.target = target
        capabilities = try await target.capabilities()
    }

    /// A runner for TilecastAuth's own engine, in process, on the in-memory store.
    public init() async throws {
        try await self.init(target: try await InProcessTarget())
    }

    /// Runs one scenario: resets the target with its configuration, then runs its steps.
    public func run(_ scenario: Scenario) async -> ScenarioResult {
        func result(_ verdict: ScenarioResult.Verdict) -> ScenarioResult {
            ScenarioResult(name: scenario.name, source: scenario.source, rules: scenario.rules, verdict: verdict)
        }
        if let reason = capabilities.reasonNotApplicable(to: scenario) {
            return result(.notApplicable(reason))
        }
        let reset: TargetReset
        do {
            reset = try await target.reset(overrides: scenario.configurationOverrides)
        } catch {
            return result(.failed(["reset: \(error)"]))
        }
        switch (reset, scenario.configurationRefused) {
        case (.unsupported(let reason), _):
            return result(.notApplicable("reset: \(reason)"))
        case (.configurationRefused, true):
            return result(.passed)
        case (.ready, true):
            return result(.failed(["configuration: expected it to be refused, but the target accepted it"]))
        case (.configurationRefused(let message), false):
            return result(.failed(["configuration refused: \(message)"]))
        case (.ready, false):
            switch await ScenarioRun(scenario, on: target).execute() {
            case .notApplicable(let reason): return result(.notApplicable(reason))
            case .finished(let failures): return result(failures.isEmpty ? .passed : .failed(failures))
            }
        }
    }
}
