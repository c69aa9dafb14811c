// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthConformance

/// The conformance runner: it passes what conforms, fails what does not with a readable difference, and
/// refuses scenario files that do not follow the format.
struct ScenarioRunnerTests {
    private func scenario(_ text: String) throws(ScenarioFormatError) -> Scenario {
        try Scenario(data: Data(text.utf8), source: "inline")
    }

    private func run(_ text: String) async throws -> ScenarioResult {
        try await ScenarioRunner().run(try scenario(text))
    }

    private static let replay = """
        {
          "name": "replayed-code",
          "description": "A used code presented again.",
          "rules": ["C-8"],
          "steps": [
            { "issueCode": {}, "capture": { "code": "code", "verifier": "verifier" } },
            { "exchange": { "code": "${code}", "verifier": "${verifier}" }, "expect": { "status": 200 } },
            { "exchange": { "code": "${code}", "verifier": "${verifier}" }, "expect": { "status": EXPECTED, "cookie": false } }
          ]
        }
        """

    @Test("A correct scenario passes")
    func correctScenarioPasses() async throws {
        let result = try await run(Self.replay.replacingOccurrences(of: "EXPECTED", with: "400"))
        #expect(result.passed, "\(result.failures)")
        #expect(result.rules == ["C-8"])
    }

    @Test("A deliberately wrong scenario — 200 for a replayed code — fails with a clear difference")
    func wrongScenarioFails() async throws {
        let result = try await run(Self.replay.replacingOccurrences(of: "EXPECTED", with: "200"))
        #expect(!result.passed)
        let report = result.failures.joined(separator: "\n")
        #expect(report.contains("step 3 (exchange): status: expected 200, got 400"))
        #expect(report.contains(#""error":"invalid_grant""#))
        // The difference names the step, what was expected and what came back, and shows no secret whole.
        #expect(report.firstMatch(of: /tc[cars]_[A-Za-z0-9_-]{43}/) == nil)
    }

    @Test("Every expectation kind reports its own difference")
    func expectationKinds() async throws {
        let result = try await run(
            """
            {
              "name": "all-wrong", "description": "Every expectation is wrong.", "rules": ["T-6"],
              "steps": [
                { "issueCode": {}, "capture": { "code": "code", "verifier": "verifier" } },
                { "exchange": { "code": "${code}", "verifier": "${verifier}" },
                  "expect": {
                    "json": { "data.authenticated": false }, "present": ["data.nothing"], "absent": ["data.credential"],
                    "matches": { "data.credential.access_token": "^tcr_" }, "headers": { "Pragma": "cache" },
                    "headersAbsent": ["Set-Cookie"], "cookie": { "name": "other", "attributes": { "SameSite": "Strict" } },
                    "storeUnchanged": true
                  } }
              ]
            }
            """
        )
        let report = result.failures.joined(separator: "\n")
        for fragment in [
            "data.authenticated: expected false, got true", "data.nothing: expected present",
            "data.credential: expected absent", "expected to match ^tcr_", "header Pragma: expected \"cache\"",
            "header Set-Cookie: expected absent", "cookie name: expected \"other\"",
            "cookie attribute SameSite: expected \"Strict\"", "storeUnchanged",
        ] {
            #expect(report.contains(fragment), "missing: \(fragment)")
        }
    }

    @Test("differs, result, headersMatch and valueDiffers check what they say")
    func negativeExpectations() async throws {
        let passing = try await run(
            """
            { "name": "n", "description": "d", "rules": ["R-8"],
              "steps": [
                { "issueCode": {}, "capture": { "code": "code", "verifier": "verifier" } },
                { "exchange": { "code": "${code}", "verifier": "${verifier}" },
                  "expect": { "result": { "setCookieCount": 1 }, "headersMatch": { "Cache-Control": "^no-store$" } },
                  "capture": { "refresh": "body.data.credential.refresh_token", "session": "cookie.value" } },
                { "refresh": { "refreshToken": "${refresh}", "studioSession": true },
                  "expect": { "differs": { "data.credential.refresh_token": "${refresh}" }, "cookie": { "valueDiffers": "${session}" } } }
              ] }
            """
        )
        #expect(passing.passed, "\(passing.failures)")
        let failing = try await run(
            """
            { "name": "n", "description": "d", "rules": ["R-8"],
              "steps": [
                { "issueCode": {}, "capture": { "code": "code", "verifier": "verifier" } },
                { "exchange": { "code": "${code}", "verifier": "${verifier}" },
                  "expect": { "result": { "setCookieCount": 2 }, "headersMatch": { "Pragma": "^cache$" }, "differs": { "data.authenticated": true } } }
              ] }
            """
        )
        let report = failing.failures.joined(separator: "\n")
        #expect(report.contains("result setCookieCount: expected 2, got 1"))
        #expect(report.contains("header Pragma: expected to match ^cache$"))
        #expect(report.contains("data.authenticated: expected a value other than true"))
    }

    @Test("An invalid file is reported and the other scenarios still load")
    func invalidFilesDoNotStopTheSuite() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scenarios-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("nested"),
            withIntermediateDirectories: true
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let valid =
            #"{ "name": "ok", "description": "d", "rules": ["T-1"], "steps": [ { "request": { "method": "GET" }, "expect": { "status": 405 } } ] }"#
        try Data(valid.utf8).write(to: folder.appendingPathComponent("nested/ok.json"))
        try Data(valid.utf8).write(to: folder.appendingPathComponent("duplicate.json"))
        try Data("[]".utf8).write(to: folder.appendingPathComponent("broken.json"))
        let suite = try ConformanceSuite(paths: [folder.path])
        #expect(suite.scenarios.map(\.name) == ["ok"])
        #expect(suite.invalidFiles.count == 2)
        #expect(
            suite.invalidFiles.contains { $0.path.hasSuffix("broken.json") && $0.message.contains("must be an object") }
        )
    }

    @Test("Concurrent steps count statuses")
    func concurrentCounts() async throws {
        let result = try await run(
            """
            { "name": "burst", "description": "A burst.", "rules": ["C-11"],
              "steps": [
                { "issueCode": {}, "capture": { "code": "code", "verifier": "verifier" } },
                { "concurrent": { "count": 10, "exchange": { "code": "${code}", "verifier": "${verifier}" } },
                  "expect": { "statusCounts": { "200": 2, "400": 8 } } }
              ] }
            """
        )
        #expect(
            result.failures.first?.contains(#"statusCounts: expected {"200":2,"400":8}, got {"200":1,"400":9}"#) == true
        )
    }

    @Test("A configuration that must be refused, but is not, fails")
    func configurationRefusal() async throws {
        let accepted = try await run(
            #"{ "name": "c", "description": "d", "rules": ["S-5"], "configurationRefused": true, "steps": [] }"#
        )
        #expect(accepted.failures == ["configuration: expected it to be refused, but the target accepted it"])
        let refused = try await run(
            #"{ "name": "c", "description": "d", "rules": ["S-5"], "configuration": { "cookie": { "secure": false } }, "configurationRefused": true, "steps": [] }"#
        )
        #expect(refused.passed)
    }

    @Test(
        "Files that do not follow the format are refused with where and why",
        arguments: [
            (#"[]"#, "a scenario must be an object"),
            (#"{ "description": "d", "rules": ["C-1"], "steps": [] }"#, "name: is required"),
            (#"{ "name": "n", "description": "d", "rules": ["c1"], "steps": [] }"#, "rules: c1 is not a rule id"),
            (#"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [], "extra": 1 }"#, "extra: unknown key"),
            (
                #"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [ { "fly": {} } ] }"#,
                "steps.0: a step needs exactly one action"
            ),
            (
                #"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [ { "issueCode": {}, "refresh": { "refreshToken": "x" } } ] }"#,
                "exactly one action"
            ),
            (
                #"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [ { "exchange": { "code": "x" } } ] }"#,
                "steps.0.exchange.verifier: is required"
            ),
            (
                #"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [ { "issueCode": { "colour": 1 } } ] }"#,
                "steps.0.issueCode.colour: unknown key"
            ),
            (
                #"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [ { "issueCode": {}, "expect": { "stauts": 200 } } ] }"#,
                "steps.0.expect.stauts: unknown key"
            ),
            (
                #"{ "name": "n", "description": "d", "rules": ["C-1"], "configuration": { "lifetime": 1 }, "steps": [] }"#,
                "configuration.lifetime: unknown configuration key"
            ),
        ]
    )
    func formatErrors(text: String, message: String) {
        #expect(throws: ScenarioFormatError.self) { try scenario(text) }
        do {
            _ = try scenario(text)
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test("An unknown variable is reported at the step that uses it")
    func unknownVariable() async throws {
        let result = try await run(
            #"{ "name": "n", "description": "d", "rules": ["C-1"], "steps": [ { "refresh": { "refreshToken": "${never}" } } ] }"#
        )
        #expect(result.failures == ["step 1 (refresh): the variable ${never} was never captured"])
    }

    @Test("Rule ids are read from the specification's list items")
    func ruleIDs() {
        let text = """
            - **C-1** a rule
            - **C-2** another
              - **X-9** indented, not a rule
            Text mentioning **C-3** is not a rule either.
            """
        #expect(ConformanceSuite.ruleIDs(inSpecification: text) == ["C-1", "C-2"])
    }

    @Test("The repository's scenarios all pass and cover every rule of the specification")
    func repositoryScenarios() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let suite = try ConformanceSuite(paths: [root.appendingPathComponent("Docs/Conformance/scenarios").path])
        #expect(suite.scenarios.count >= 60)
        let specification = try String(
            contentsOf: root.appendingPathComponent("Docs/Specification.md"),
            encoding: .utf8
        )
        let rules = Set(ConformanceSuite.ruleIDs(inSpecification: specification))
        let covered = Set(suite.scenarios.flatMap(\.rules))
        #expect(rules.subtracting(covered).isEmpty, "uncovered: \(rules.subtracting(covered).sorted())")
        #expect(covered.subtracting(rules).isEmpty, "unknown: \(covered.subtracting(rules).sorted())")
        let runner = try await ScenarioRunner()
        for scenario in suite.scenarios {
            let result = await runner.run(scenario)
            #expect(result.passed, "\(scenario.name): \(result.failures)")
        }
    }
}
