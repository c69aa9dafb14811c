// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuthConformance

/// `tilecast-auth conformance [--coverage] [--specification PATH] [PATH…]`: runs conformance scenarios
/// against the engine with the in-memory store.
struct ConformanceCommand: Subcommand {
    static let usage = """
        usage: tilecast-auth conformance [--coverage] [--specification PATH] [PATH…]

          PATH               scenario files or folders (default: Docs/Conformance/scenarios)
          --coverage         also list, for every rule of the specification, the passing scenarios that
                             cover it; fails if a rule has none or a scenario names a rule that does not exist
          --specification    the specification whose rule ids count (default: Docs/Specification.md)
        """

    var paths: [String] = []
    var coverage = false
    var specification = "Docs/Specification.md"

    init(arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--coverage":
                coverage = true
            case "--specification":
                guard let path = remaining.popFirst() else { throw UsageError("--specification needs a path") }
                specification = path
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

    /// Runs the scenarios and prints one line per scenario, the differences of each failure, and a
    /// closing `N passed, N failed`. Returns whether everything passed (and, with `--coverage`, every rule
    /// is covered).
    mutating func run() async -> Bool {
        let suite: ConformanceSuite
        do {
            suite = try ConformanceSuite(paths: paths)
        } catch {
            print("error: \(error)")
            return false
        }
        let runner = ScenarioRunner()
        var passed: [ScenarioResult] = []
        var failed = suite.invalidFiles.count
        for invalid in suite.invalidFiles {
            print("FAIL  \(invalid.path)  (not a valid scenario file)")
            print("        \(invalid.message)")
        }
        for scenario in suite.scenarios {
            let result = await runner.run(scenario)
            if result.passed {
                passed.append(result)
                print("PASS  \(result.name)")
            } else {
                failed += 1
                print("FAIL  \(result.name)  (\(result.source ?? "inline"))")
                for failure in result.failures {
                    print("        \(failure)")
                }
            }
        }
        print("\(passed.count) passed, \(failed) failed")
        guard coverage else { return failed == 0 }
        return reportCoverage(of: passed) && failed == 0
    }

    /// Prints, for every rule of the specification, how many passing scenarios cover it — a failing
    /// scenario covers nothing — and returns whether every rule is covered and every rule a scenario
    /// names exists.
    private func reportCoverage(of passed: [ScenarioResult]) -> Bool {
        guard let text = try? String(contentsOfFile: specification, encoding: .utf8) else {
            print("error: cannot read the specification at \(specification)")
            return false
        }
        let rules = ConformanceSuite.ruleIDs(inSpecification: text)
        var covering: [String: [String]] = [:]
        for result in passed {
            for rule in result.rules {
                covering[rule, default: []].append(result.name)
            }
        }
        print("\ncoverage of \(specification) (\(rules.count) rules):")
        for rule in rules {
            let names = covering[rule] ?? []
            let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
            print(
                "  \(rule.padding(toLength: 5, withPad: " ", startingAt: 0)) \(String(format: "%3d", names.count))  \(shown)"
            )
        }
        let uncovered = rules.filter { covering[$0] == nil }
        let unknown = Set(covering.keys).subtracting(rules).sorted()
        print("uncovered rules: \(uncovered.isEmpty ? "none" : uncovered.joined(separator: ", "))")
        if !unknown.isEmpty {
            print("rules named by scenarios but not in the specification: \(unknown.joined(separator: ", "))")
        }
        return uncovered.isEmpty && unknown.isEmpty
    }
}

/// A command line the tool cannot follow.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
