// SPDX-License-Identifier: Apache-2.0

/// The variables a scenario has captured, and their substitution into later steps.
///
/// A string that is exactly `${name}` becomes the captured value, whatever its JSON type; `${name}`
/// inside a longer string is replaced by the value's text.
struct ScenarioVariables {
    private(set) var values: [String: ScenarioJSON] = [:]

    mutating func set(_ name: String, _ value: ScenarioJSON) {
        values[name] = value
    }

    /// `json` with every `${name}` replaced; throws for an unknown variable.
    func substitute(_ json: ScenarioJSON) throws(ScenarioFormatError) -> ScenarioJSON {
        switch json {
        case .string(let text):
            return try substitute(text)
        case .array(let items):
            var result: [ScenarioJSON] = []
            for item in items {
                result.append(try substitute(item))
            }
            return .array(result)
        case .object(let members):
            var result: [String: ScenarioJSON] = [:]
            for (key, value) in members {
                result[key] = try substitute(value)
            }
            return .object(result)
        case .null, .bool, .number:
            return json
        }
    }

    private func substitute(_ text: String) throws(ScenarioFormatError) -> ScenarioJSON {
        guard text.contains("${") else { return .string(text) }
        if let whole = text.wholeMatch(of: /\$\{([A-Za-z0-9_]+)\}/) {
            return try value(String(whole.1))
        }
        var output = ""
        var rest = Substring(text)
        while let match = rest.firstMatch(of: /\$\{([A-Za-z0-9_]+)\}/) {
            output += rest[..<match.range.lowerBound]
            output += try value(String(match.1)).text
            rest = rest[match.range.upperBound...]
        }
        return .string(output + rest)
    }

    private func value(_ name: String) throws(ScenarioFormatError) -> ScenarioJSON {
        guard let value = values[name] else {
            throw ScenarioFormatError(path: "", message: "the variable ${\(name)} was never captured")
        }
        return value
    }
}
