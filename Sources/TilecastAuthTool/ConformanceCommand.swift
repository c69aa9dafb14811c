// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuthConformance

/// `tilecast-auth conformance [--target URL …] [--junit PATH] [--coverage] [PATH…]`: runs conformance
/// scenarios against the engine with the in-memory store, or over HTTP against a running server.
struct ConformanceCommand: Subcommand {
    static let usage = """
        usage: tilecast-auth conformance [--target URL [--control-token TOKEN] [--timeout SECONDS]]
                                         [--junit PATH] [--coverage] [--specification PATH] [PATH…]

          PATH               scenario files or folders (default: Docs/Conformance/scenarios)
          --target URL       run over HTTP against the server at URL (http://host:port), which must serve
                             the endpoint at /api/v1/oauth/ios-session and the control API of
                             Docs/Conformance/ControlAPI.md at /conformance/v1/; without it, in process
          --control-token    the control API's token (default: $TILECAST_CONFORMANCE_TOKEN)
          --timeout          seconds each request may take, connecting included (default 10)
          --junit PATH       also write the results as JUnit XML
          --requirements     print, for each control operation, configuration member and the peer field,
                             the scenarios that need it (Markdown), and run nothing
          --coverage         also list, for every rule of the specification, the passing scenarios that
                             cover it; fails if a rule has none or a scenario names a rule that does not exist
          --specification    the specification whose rule ids count (default: Docs/Specification.md)

        Prints one line per scenario (PASS, FAIL or N/A with its reason), the differences of each failure,
        and "N passed, N failed, N not applicable". Exits 1 when a scenario fails, 2 when the target
        cannot be reached or the scenarios cannot be read.
        """

    var paths: [String] = []
    var coverage = false
    var specification = "Docs/Specification.md"
    var target: String?
    var controlToken = ProcessInfo.processInfo.environment["TILECAST_CONFORMANCE_TOKEN"]
    var timeout = 10.0
    var junit: String?
    var requirements = false

    init(arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        func value(of option: String) throws(UsageError) -> String {
            guard let value = remaining.popFirst() else { throw UsageError("\(option) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--coverage":
                coverage = true
            case "--requirements":
                requirements = true
            case "--specification":
                specification = try value(of: argument)
            case "--target":
                target = try value(of: argument)
            case "--control-token":
                controlToken = try value(of: argument)
            case "--timeout":
                guard let seconds = Double(try value(of: argument)), seconds > 0, seconds <= 600 else {
                    throw UsageError("--timeout takes seconds, more than 0 and at most 600")
                }
                timeout = seconds
            case "--junit":
                junit = try value(of: argument)
            case _ where argument.hasPrefix("-"):
                throw UsageError("unknown option \(argument)")
            default:
                paths.append(argument)
            }
        }
        if paths.isEmpty {
            paths = ["Docs/Conformance/scenarios"]
        }
    }

    /// Exit statuses beyond success.
    enum Failure: Int32 {
        case scenariosFailed = 1
        case cannotRun = 2
    }

    /// Runs the scenarios; exits 2 when they cannot run at all.
    mutating func run() async -> Bool {
        switch await runScenarios() {
        case nil: return true
        case .scenariosFailed: return false
        case .cannotRun: exit(Failure.cannotRun.rawValue)
        }
    }

    /// Runs the scenarios and prints one line per scenario, the differences of each failure, and a
    /// closing `N passed, N failed, N not applicable`. Returns `nil` when nothing failed (and, with
    /// `--coverage`, every rule is covered).
    private func runScenarios() async -> Failure? {
        let suite: ConformanceSuite
        do {
            suite = try ConformanceSuite(paths: paths)
        } catch {
            say("error: \(error)")
            return .cannotRun
        }
        if requirements {
            printRequirements(of: suite.scenarios)
            return suite.invalidFiles.isEmpty ? nil : .cannotRun
        }
        let runner: ScenarioRunner
        do {
            runner = try await makeRunner()
        } catch {
            say("error: \(error)")
            return .cannotRun
        }
        var results: [ScenarioResult] = suite.invalidFiles.map { invalid in
            ScenarioResult(
                name: invalid.path,
                source: invalid.path,
                rules: [],
                verdict: .failed(["not a valid scenario file: \(invalid.message)"])
            )
        }
        for result in results {
            say("FAIL  \(result.name)  (not a valid scenario file)")
            say("        \(result.failures.joined(separator: "\n        "))")
        }
        for scenario in suite.scenarios {
            let result = await runner.run(scenario)
            results.append(result)
            switch result.verdict {
            case .passed:
                say("PASS  \(result.name)")
            case .notApplicable(let reason):
                say("N/A   \(result.name)  (\(reason))")
            case .failed(let failures):
                say("FAIL  \(result.name)  (\(result.source ?? "inline"))")
                for failure in failures {
                    say("        " + failure.replacingOccurrences(of: "\n", with: "\n        "))
                }
            }
        }
        let passed = results.filter(\.passed)
        let failed = results.filter { !$0.failures.isEmpty }.count
        let notApplicable = results.count - passed.count - failed
        say("\(passed.count) passed, \(failed) failed, \(notApplicable) not applicable")
        if let junit {
            do {
                try JUnitReport(results: results, target: target ?? "in process").xml
                    .write(toFile: junit, atomically: true, encoding: .utf8)
            } catch {
                say("error: cannot write \(junit): \(error)")
                return .cannotRun
            }
        }
        if failed > 0 {
            return .scenariosFailed
        }
        if passed.isEmpty {
            say("nothing passed: a run that checks nothing is not a success")
            return .scenariosFailed
        }
        guard coverage else { return nil }
        return reportCoverage(of: passed) ? nil : .scenariosFailed
    }

    /// Prints a line with every control character but the line break shown as `\u{…}`: a server's text
    /// in a report must not move the cursor or recolour a terminal or a CI log.
    private func say(_ text: String) {
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n"
                || !(scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format)
            {
                shown.unicodeScalars.append(scalar)
            } else {
                shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        print(shown)
    }

    /// Prints, as a Markdown list, the scenarios that need each operation besides `reset`, each backend
    /// operation of `failNext`, each configuration member and the peer field.
    private func printRequirements(of scenarios: [Scenario]) {
        let needs = scenarios.map { (name: $0.name, needs: TargetCapabilities.required(by: $0)) }
        func line(_ label: String, _ names: [String]) {
            guard !names.isEmpty else { return }
            say("- \(label) (\(names.count)): \(names.sorted().joined(separator: ", "))")
        }
        for operation in ConformanceOperation.allCases {
            line(
                "`\(operation.rawValue)`",
                needs.filter { $0.needs.operations.contains(operation.rawValue) }.map(\.name)
            )
        }
        for operation in ConformanceOperation.failableOperations {
            line("`failNext` of `\(operation)`", needs.filter { $0.needs.failNext.contains(operation) }.map(\.name))
        }
        for member in ScenarioConfiguration.keys.sorted() {
            line("configuration `\(member)`", needs.filter { $0.needs.configuration.contains(member) }.map(\.name))
        }
        line("the peer field", needs.filter(\.needs.peer).map(\.name))
        let plain = needs.filter {
            $0.needs.operations == ["reset"] && $0.needs.configuration.isEmpty && !$0.needs.peer
        }
        line("nothing but `reset`", plain.map(\.name))
    }

    /// The runner for `--target`, or for the engine in process.
    private func makeRunner() async throws -> ScenarioRunner {
        guard let target else {
            return try await ScenarioRunner()
        }
        guard let controlToken, !controlToken.isEmpty else {
            throw UsageError("--target needs the control API's token: --control-token or TILECAST_CONFORMANCE_TOKEN")
        }
        let http = try HTTPTarget(baseURL: target, token: controlToken, timeout: .milliseconds(Int64(timeout * 1000)))
        do {
            return try await ScenarioRunner(target: try await http.connected())
        } catch {
            throw TargetError("cannot use \(target): \(error)")
        }
    }

    /// Prints, for every rule of the specification, how many passing scenarios cover it — a failing
    /// scenario covers nothing — and returns whether every rule is covered and every rule a scenario
    /// names exists.
    private func reportCoverage(of passed: [ScenarioResult]) -> Bool {
        guard let text = try? String(contentsOfFile: specification, encoding: .utf8) else {
            say("error: cannot read the specification at \(specification)")
            return false
        }
        let rules = ConformanceSuite.ruleIDs(inSpecification: text)
        var covering: [String: [String]] = [:]
        for result in passed {
            for rule in result.rules {
                covering[rule, default: []].append(result.name)
            }
        }
        say("\ncoverage of \(specification) (\(rules.count) rules):")
        for rule in rules {
            let names = covering[rule] ?? []
            let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
            say(
                "  \(rule.padding(toLength: 5, withPad: " ", startingAt: 0)) \(String(format: "%3d", names.count))  \(shown)"
            )
        }
        let uncovered = rules.filter { covering[$0] == nil }
        let unknown = Set(covering.keys).subtracting(rules).sorted()
        say("uncovered rules: \(uncovered.isEmpty ? "none" : uncovered.joined(separator: ", "))")
        if !unknown.isEmpty {
            say("rules named by scenarios but not in the specification: \(unknown.joined(separator: ", "))")
        }
        return uncovered.isEmpty && unknown.isEmpty
    }
}

/// A command line the tool cannot follow.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
