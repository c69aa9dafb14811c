// SPDX-License-Identifier: Apache-2.0

/// What running one scenario showed.
public struct ScenarioResult: Sendable {
    /// The scenario's name.
    public let name: String
    /// The file it came from.
    public let source: String?
    /// The rules it covers.
    public let rules: [String]
    /// Every way the implementation differed from the scenario; empty when it passed.
    public let failures: [String]

    /// Whether every step behaved as the scenario expects.
    public var passed: Bool { failures.isEmpty }
}
