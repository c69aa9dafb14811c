// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A conformance scenario: a named, language-neutral sequence of steps against the ios-session endpoint,
/// each checking what the specification says must happen. The format is `Docs/Conformance/README.md`.
public struct Scenario: Sendable {
    /// A unique name.
    public let name: String
    /// What the scenario shows.
    public let description: String
    /// The ids of the rules of `Docs/Specification.md` the scenario covers.
    public let rules: [String]
    /// The configuration overrides.
    public let configuration: ScenarioConfiguration
    /// The configuration overrides as written: what the runner hands a server's `reset`.
    public let configurationOverrides: [String: ScenarioJSON]
    /// Whether the configuration must be refused (then the scenario has no steps).
    public let configurationRefused: Bool
    /// The steps, in order.
    public let steps: [ScenarioStep]
    /// The file the scenario came from, if any.
    public let source: String?

    static let keys: Set<String> = ["name", "description", "rules", "configuration", "configurationRefused", "steps"]

    /// Reads a scenario from the text of a scenario file.
    public init(data: Data, source: String? = nil) throws(ScenarioFormatError) {
        guard let json = ScenarioJSON(data: data) else {
            throw ScenarioFormatError(path: "", message: "the file is not JSON")
        }
        try self.init(json: json, source: source)
    }

    /// Reads a scenario from its JSON.
    public init(json: ScenarioJSON, source: String? = nil) throws(ScenarioFormatError) {
        guard let members = json.objectValue else {
            throw ScenarioFormatError(path: "", message: "a scenario must be an object")
        }
        let reader = ScenarioReader(members, path: "")
        try reader.requireKeys(Self.keys)
        guard let name = try reader.string("name"), !name.isEmpty else {
            throw ScenarioFormatError(path: "name", message: "is required")
        }
        guard let description = try reader.string("description"), !description.isEmpty else {
            throw ScenarioFormatError(path: "description", message: "is required")
        }
        guard let rules = try reader.strings("rules"), !rules.isEmpty else {
            throw ScenarioFormatError(path: "rules", message: "must list at least one rule id")
        }
        for rule in rules where rule.wholeMatch(of: /[A-Z]-[0-9]+/) == nil {
            throw ScenarioFormatError(path: "rules", message: "\(rule) is not a rule id such as C-4")
        }
        self.name = name
        self.description = description
        self.rules = rules
        self.source = source
        self.configurationOverrides = try reader.object("configuration") ?? [:]
        self.configuration = try ScenarioConfiguration(configurationOverrides, path: "configuration")
        self.configurationRefused = try reader.bool("configurationRefused") ?? false

        guard let stepList = members["steps"]?.arrayValue else {
            throw ScenarioFormatError(path: "steps", message: "must be an array of steps")
        }
        if configurationRefused && !stepList.isEmpty {
            throw ScenarioFormatError(path: "steps", message: "must be empty when configurationRefused is true")
        }
        if !configurationRefused && stepList.isEmpty {
            throw ScenarioFormatError(path: "steps", message: "a scenario needs at least one step")
        }
        var steps: [ScenarioStep] = []
        for (index, step) in stepList.enumerated() {
            steps.append(try Self.step(step, path: "steps.\(index)"))
        }
        self.steps = steps
    }

    private static func step(_ json: ScenarioJSON, path: String) throws(ScenarioFormatError) -> ScenarioStep {
        guard let members = json.objectValue else {
            throw ScenarioFormatError(path: path, message: "a step must be an object")
        }
        let kinds = members.keys.compactMap(ScenarioAction.Kind.init(rawValue:))
        guard kinds.count == 1, let kind = kinds.first else {
            throw ScenarioFormatError(
                path: path,
                message: "a step needs exactly one action, found \(kinds.map(\.rawValue))"
            )
        }
        for key in members.keys where key != kind.rawValue && !["expect", "capture", "note"].contains(key) {
            throw ScenarioFormatError(path: "\(path).\(key)", message: "unknown key")
        }
        guard let parameters = members[kind.rawValue]?.objectValue else {
            throw ScenarioFormatError(path: "\(path).\(kind.rawValue)", message: "must be an object of parameters")
        }
        try ScenarioReader(parameters, path: "\(path).\(kind.rawValue)").requireKeys(kind.allowedParameters)
        for required in kind.requiredParameters where parameters[required] == nil {
            throw ScenarioFormatError(path: "\(path).\(kind.rawValue).\(required)", message: "is required")
        }
        if let (names, required) = kind.exclusiveParameters {
            let given = names.filter { parameters[$0] != nil }
            if given.count > 1 || (required && given.isEmpty) {
                let count = required ? "exactly one" : "at most one"
                throw ScenarioFormatError(
                    path: "\(path).\(kind.rawValue)",
                    message: "takes \(count) of \(names.joined(separator: ", ")), got \(given.count)"
                )
            }
        }
        if kind == .advanceClock, let seconds = parameters["seconds"]?.numberValue, seconds < 0 {
            throw ScenarioFormatError(path: "\(path).advanceClock.seconds", message: "must not be negative")
        }
        if kind == .failNext, let operation = parameters["operation"]?.stringValue,
            !ConformanceOperation.failableOperations.contains(operation)
        {
            throw ScenarioFormatError(
                path: "\(path).failNext.operation",
                message: "must be one of \(ConformanceOperation.failableOperations.joined(separator: ", "))"
            )
        }
        if kind == .concurrent {
            let requests = ["request", "exchange", "refresh"].filter { parameters[$0] != nil }
            guard requests.count == 1, let inner = requests.first, let innerKind = ScenarioAction.Kind(rawValue: inner),
                let innerParameters = parameters[inner]?.objectValue
            else {
                throw ScenarioFormatError(
                    path: "\(path).concurrent",
                    message: "needs exactly one of request, exchange, refresh"
                )
            }
            try ScenarioReader(innerParameters, path: "\(path).concurrent.\(inner)").requireKeys(
                innerKind.allowedParameters
            )
        }

        let expectation = members["expect"]?.objectValue ?? [:]
        if members["expect"] != nil && members["expect"]?.objectValue == nil {
            throw ScenarioFormatError(path: "\(path).expect", message: "must be an object")
        }
        try ScenarioReader(expectation, path: "\(path).expect").requireKeys(ScenarioStep.expectationKeys)

        var captures: [(name: String, path: String)] = []
        if let capture = members["capture"] {
            guard let pairs = capture.objectValue else {
                throw ScenarioFormatError(path: "\(path).capture", message: "must map variable names to paths")
            }
            for (name, value) in pairs.sorted(by: { $0.key < $1.key }) {
                guard let target = value.stringValue else {
                    throw ScenarioFormatError(path: "\(path).capture.\(name)", message: "must be a path string")
                }
                captures.append((name, target))
            }
        }
        return ScenarioStep(
            action: ScenarioAction(kind: kind, parameters: parameters),
            expectation: expectation,
            captures: captures,
            note: members["note"]?.stringValue
        )
    }
}
