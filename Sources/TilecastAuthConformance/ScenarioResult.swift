// SPDX-License-Identifier: Apache-2.0

/// What running one scenario showed.
public struct ScenarioResult: Sendable {
    /// How a scenario came out.
    public enum Verdict: Sendable, Equatable {
        case passed
        /// Every way the implementation differed from the scenario.
        case failed([String])
        /// The target lacks an operation, configuration member or capability the scenario needs; the
        /// reason says which. Never counted as passed.
        case notApplicable(String)
    }

    /// The scenario's name.
    public let name: String
    /// The file it came from.
    public let source: String?
    /// The rules it covers.
    public let rules: [String]
    /// How it came out.
    public let verdict: Verdict

    public init(name: String, source: String?, rules: [String], verdict: Verdict) {
        self.name = name
        self.source = source
        self.rules = rules
        self.verdict = verdict
    }

    /// Whether every step behaved as the scenario expects.
    public var passed: Bool { verdict == .passed }

    /// Every way the implementation differed from the scenario; empty unless it failed.
    public var failures: [String] {
        if case .failed(let failures) = verdict { failures } else { [] }
    }
}
