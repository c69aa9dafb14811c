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
        /// What `inspect` answers instead of the truth.
        var inspectAnswer: ScenarioJSON?

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
            if operation == .inspect, let inspectAnswer {
                return inspectAnswer
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

    @Test("An operation the target listed but refuses with 501 while running fails the scenario")
    func unsupportedAtRunTime() async throws {
        let runner = try await ScenarioRunner(
            target: PartialTarget(
                inner: try await InProcessTarget(),
                capabilities: .complete,
                refusesAtRunTime: [.inspect]
            )
        )
        let result = await runner.run(try scenario(Self.refusal))
        #expect(
            result.verdict
                == .failed([
                    "step 1 (exchange): inspect: 501 unsupported — although the target's capabilities list it"
                ])
        )
    }

    @Test("An inspect that shows no records, or not as strings, fails storeUnchanged and secretsProtected")
    func inspectWithoutRecordsFails() async throws {
        let secrets = """
            {
              "name": "secrets", "description": "Secrets stay digests.", "rules": ["K-2"],
              "steps": [ { "issueCode": {}, "expect": { "secretsProtected": true } } ]
            }
            """
        for answer in [
            ScenarioJSON.object([:]), .object(["error": .string("database unavailable")]),
            .object(["records": .string("tca_raw"), "events": .array([])]),
            .object(["records": .array([.number(1)]), "events": .array([])]),
        ] {
            let runner = try await ScenarioRunner(
                target: PartialTarget(
                    inner: try await InProcessTarget(),
                    capabilities: .complete,
                    inspectAnswer: answer
                )
            )
            for text in [Self.refusal, secrets] {
                let result = await runner.run(try scenario(text))
                #expect(!result.failures.isEmpty, "\(answer): \(result.verdict)")
                #expect(result.failures.first?.contains("inspect:") == true, "\(result.failures)")
            }
        }
    }

    @Test("A target whose capabilities lack reset, or speak another version, cannot be run at all")
    func capabilitiesNeedResetAndVersion() {
        let withoutReset = ScenarioJSON.object(["version": .number(1), "operations": .array([.string("inspect")])])
        let otherVersion = ScenarioJSON.object(["version": .number(2), "operations": .array([.string("reset")])])
        let noVersion = ScenarioJSON.object(["operations": .array([.string("reset")])])
        for document in [withoutReset, otherVersion, noVersion, .array([])] {
            #expect(throws: TargetError.self) { _ = try TargetCapabilities(document: document) }
        }
    }
}
