// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension ScenarioRun {
    /// Every way `result` differs from `expectation`, as sentences a person can act on.
    func check(
        _ expectation: [String: ScenarioJSON],
        kind: ScenarioAction.Kind,
        result: ScenarioJSON,
        storeChanged: Bool
    ) -> [String] {
        var mismatches: [String] = []
        func expect(_ path: String, in document: ScenarioJSON, equals expected: ScenarioJSON, as label: String) {
            let actual = document.value(at: path)
            if actual != expected {
                mismatches.append("\(label): expected \(expected), got \(actual.map(\.description) ?? "nothing")")
            }
        }
        let body = kind.isRequest ? (result.value(at: "body") ?? .null) : result

        for (key, value) in expectation.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "status":
                expect("status", in: result, equals: value, as: "status")
            case "error":
                expect("error", in: body, equals: value, as: "error")
            case "json":
                for (path, expected) in (value.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    expect(path, in: body, equals: expected, as: path)
                }
            case "result":
                for (path, expected) in (value.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    expect(path, in: result, equals: expected, as: "result \(path)")
                }
            case "differs":
                for (path, unwanted) in (value.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let actual = body.value(at: path)
                    if actual == nil || actual == unwanted {
                        mismatches.append(
                            "\(path): expected a value other than \(unwanted), got \(actual.map(\.description) ?? "nothing")"
                        )
                    }
                }
            case "present":
                for path in (value.arrayValue ?? []).map(\.text) where body.value(at: path) == nil {
                    mismatches.append("\(path): expected present, got nothing")
                }
            case "absent":
                for path in (value.arrayValue ?? []).map(\.text) {
                    if let found = body.value(at: path) {
                        mismatches.append("\(path): expected absent, got \(found)")
                    }
                }
            case "matches":
                for (path, pattern) in (value.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let actual = body.value(at: path)?.text ?? ""
                    guard let regex = try? Regex(pattern.text) else {
                        mismatches.append("\(path): \(pattern.text) is not a regular expression")
                        continue
                    }
                    if actual.firstMatch(of: regex) == nil {
                        mismatches.append("\(path): expected to match \(pattern.text), got \(actual)")
                    }
                }
            case "headers":
                for (name, expected) in (value.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    expect("headers.\(name.lowercased())", in: result, equals: expected, as: "header \(name)")
                }
            case "headersMatch":
                for (name, pattern) in (value.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let actual = result.value(at: "headers.\(name.lowercased())")
                    guard let regex = try? Regex(pattern.text) else {
                        mismatches.append("header \(name): \(pattern.text) is not a regular expression")
                        continue
                    }
                    if actual.map({ $0.text.firstMatch(of: regex) == nil }) ?? true {
                        mismatches.append(
                            "header \(name): expected to match \(pattern.text), got \(actual.map(\.description) ?? "nothing")"
                        )
                    }
                }
            case "headersPresent":
                for name in (value.arrayValue ?? []).map(\.text)
                where result.value(at: "headers.\(name.lowercased())") == nil {
                    mismatches.append("header \(name): expected present, got nothing")
                }
            case "headersAbsent":
                for name in (value.arrayValue ?? []).map(\.text) {
                    if let found = result.value(at: "headers.\(name.lowercased())") {
                        mismatches.append("header \(name): expected absent, got \(found)")
                    }
                }
            case "cookie":
                mismatches += checkCookie(value, result: result)
            case "statusCounts":
                let actual = (result.value(at: "statuses")?.objectValue ?? [:]).filter {
                    ($0.value.numberValue ?? 0) > 0
                }
                let expected = (value.objectValue ?? [:]).filter { ($0.value.numberValue ?? 0) > 0 }
                if actual != expected {
                    mismatches.append(
                        "statusCounts: expected \(ScenarioJSON.object(expected)), got \(ScenarioJSON.object(actual))"
                    )
                }
            case "authenticated":
                expect("authenticated", in: result, equals: value, as: "authenticated")
            case "failure":
                expect("failure", in: result, equals: value, as: "failure")
            case "outcome":
                expect("outcome", in: result, equals: value, as: "outcome")
            case "storeUnchanged":
                if value.boolValue == true && storeChanged {
                    mismatches.append("storeUnchanged: expected the store to be exactly as before, but it changed")
                } else if value.boolValue == false && !storeChanged {
                    mismatches.append("storeUnchanged: expected the store to change, but it did not")
                }
            case "secretsProtected":
                break  // checked by the run, which asks the target to show its records
            default:
                mismatches.append("unknown expectation \(key)")
            }
        }
        return mismatches
    }

    private func checkCookie(_ expected: ScenarioJSON, result: ScenarioJSON) -> [String] {
        let count = result.value(at: "setCookieCount")?.intValue ?? 0
        if expected.boolValue == false {
            return count == 0 ? [] : ["cookie: expected no Set-Cookie, got \(count)"]
        }
        guard count == 1, let cookie = result.value(at: "cookie") else {
            return ["cookie: expected exactly one Set-Cookie, got \(count)"]
        }
        guard let wanted = expected.objectValue else { return [] }
        var mismatches: [String] = []
        if let name = wanted["name"], cookie.value(at: "name") != name {
            mismatches.append("cookie name: expected \(name), got \(cookie.value(at: "name") ?? .null)")
        }
        if let pattern = wanted["valueMatches"]?.text, let regex = try? Regex(pattern) {
            let value = cookie.value(at: "value")?.text ?? ""
            if value.firstMatch(of: regex) == nil {
                mismatches.append("cookie value: expected to match \(pattern), got \(value)")
            }
        }
        if let unwanted = wanted["valueDiffers"], cookie.value(at: "value") == unwanted {
            mismatches.append("cookie value: expected a value other than \(unwanted)")
        }
        let attributes = cookie.value(at: "attributes")?.objectValue ?? [:]
        for (name, value) in (wanted["attributes"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let actual = attributes[name.lowercased()]
            if actual != value {
                mismatches.append(
                    "cookie attribute \(name): expected \(value), got \(actual.map(\.description) ?? "nothing")"
                )
            }
        }
        for name in (wanted["absentAttributes"]?.arrayValue ?? []).map(\.text) {
            if let actual = attributes[name.lowercased()] {
                mismatches.append("cookie attribute \(name): expected absent, got \(actual)")
            }
        }
        if let limit = wanted["maxAgeAtMost"]?.numberValue {
            // rfc6265bis §5.6.2: digits only, which a browser reads; `1e1` or `5.5` it ignores.
            let text = attributes["max-age"]?.stringValue ?? ""
            let digits = !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
            let maxAge = digits ? Double(text) ?? .infinity : .infinity
            if !(maxAge > 0 && maxAge <= limit) {
                mismatches.append(
                    "cookie Max-Age: expected 1 to \(Int(limit)), got \(attributes["max-age"]?.text ?? "nothing")"
                )
            }
        }
        return mismatches
    }
}
