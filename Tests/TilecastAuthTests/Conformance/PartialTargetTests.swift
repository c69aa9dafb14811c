// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthConformance

/// A target that implements only part of the control API: scenarios that need the rest are not
/// applicable, with the reason, and never counted as passed.
struct PartialTargetTests {
    private func scenario(_ text: String) throws -> Scenario {
        try Scenario(data: Data(text.utf8), source: "inline")
    }

    /// The engine in process, claiming less than it has — or refusing an operation with 501 although it
    /// claimed it, as a server that lists more than it implements would.
    private struct PartialTarget: ConformanceTarget {
        let inner: InProcessTarget
        let capabilities: TargetCapabilities
        var refusesAtRunTime: Set<ConformanceOperation> = []

        func capabilities() async throws(TargetError) -> TargetCapabilities { capabilities }
        func reset(overrides: [String: ScenarioJSON]) async throws(TargetError) -> TargetReset {
            try await inner.reset(overrides: overrides)
        }
        func send(_ calls: [EndpointCall]) async -> [Result<WireResponse, WireError>] {
            await inner.send(calls)
        }
        func perform(
            _ operation: ConformanceOperation,
            _ parameters: [String: ScenarioJSON]
        ) async throws(TargetError) -> ScenarioJSON {
            if refusesAtRunTime.contains(operation) {
                throw TargetError("\(operation.rawValue): 501 unsupported", unsupported: true)
            }
            return try await inner.perform(operation, parameters)
        }
    }

    private static let refusal = """
        {
          "name": "refusal", "description": "An unknown code changes nothing.", "rules": ["C-3"],
          "configuration": { "rateLimit": { "capacity": 5 } },
          "steps": [
            { "exchange": { "code": "tcc_unknown", "verifier": "v", "peer": "198.51.100.7" },
              "expect": { "status": 400, "storeUnchanged": true } }
          ]
        }
        """

    @Test("Each missing operation, configuration member and the peer field is named as the reason")
    func reasonsNameWhatIsMissing() async throws {
        var capabilities = TargetCapabilities.complete
        capabilities.operations.remove("inspect")
        capabilities.configuration.remove("rateLimit")
        capabilities.peer = false
        let runner = try await ScenarioRunner(
            target: PartialTarget(inner: try await InProcessTarget(), capabilities: capabilities)
        )
        let result = await runner.run(try scenario(Self.refusal))
        #expect(!result.passed)
        #expect(result.failures.isEmpty)
        #expect(
            result.verdict
                == .notApplicable(
                    "needs the control operation inspect; needs the configuration member rateLimit; "
                        + "needs requests from a given peer address (Tilecast-Conformance-Peer)"
                )
        )
    }

    @Test("The same scenario passes on a target with every capability")
    func completeTargetRunsIt() async throws {
        let runner = try await ScenarioRunner(
            target: PartialTarget(inner: try await InProcessTarget(), capabilities: .complete)
        )
        let result = await runner.run(try scenario(Self.refusal))
        #expect(result.passed, "\(result.failures)")
    }

    @Test("An operation the target refuses with 501 while running makes the scenario not applicable, not passed")
    func unsupportedAtRunTime() async throws {
        let runner = try await ScenarioRunner(
            target: PartialTarget(
                inner: try await InProcessTarget(),
                capabilities: .complete,
                refusesAtRunTime: [.inspect]
            )
        )
        let result = await runner.run(try scenario(Self.refusal))
        #expect(result.verdict == .notApplicable("step 1 (exchange): inspect: 501 unsupported"))
    }
}
