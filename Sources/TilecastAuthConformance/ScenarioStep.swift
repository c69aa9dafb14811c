// SPDX-License-Identifier: Apache-2.0

/// One step of a scenario: an action, what to expect of its result, and what to remember from it.
public struct ScenarioStep: Sendable {
    /// The action.
    public let action: ScenarioAction
    /// The expectations, as written; checked after variables are substituted.
    public let expectation: [String: ScenarioJSON]
    /// Variables to set from the result: name → path into the step's result document.
    public let captures: [(name: String, path: String)]
    /// A remark for people reading the scenario.
    public let note: String?

    /// The expectation keys a step may use.
    static let expectationKeys: Set<String> = [
        "status", "error", "json", "differs", "present", "absent", "matches", "result", "headers", "headersMatch",
        "headersPresent", "headersAbsent", "cookie", "statusCounts", "authenticated", "failure", "outcome",
        "storeUnchanged", "secretsProtected",
    ]
}
