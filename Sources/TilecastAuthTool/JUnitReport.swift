// SPDX-License-Identifier: Apache-2.0

import TilecastAuthConformance

/// Scenario results as JUnit XML, the format CI systems read: one `testcase` per scenario, a `failure`
/// for a failed one and `skipped` with the reason for one that is not applicable.
struct JUnitReport {
    let results: [ScenarioResult]
    /// What the scenarios ran against, named in the suite.
    let target: String

    var xml: String {
        let failures = results.filter { !$0.failures.isEmpty }.count
        let skipped = results.filter { if case .notApplicable = $0.verdict { true } else { false } }.count
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="tilecast-conformance" tests="\#(results.count)" failures="\#(failures)" skipped="\#(skipped)">"#,
            #"  <testsuite name="conformance against \#(Self.escape(target))" tests="\#(results.count)" failures="\#(failures)" skipped="\#(skipped)">"#,
        ]
        for result in results {
            let folder =
                result.source.map { source in
                    source.split(separator: "/").dropLast().last.map(String.init) ?? "scenarios"
                } ?? "scenarios"
            let opening =
                #"    <testcase classname="conformance.\#(Self.escape(folder))" name="\#(Self.escape(result.name))""#
            switch result.verdict {
            case .passed:
                lines.append(opening + "/>")
            case .notApplicable(let reason):
                lines.append(opening + ">")
                lines.append(#"      <skipped message="not applicable: \#(Self.escape(reason))"/>"#)
                lines.append("    </testcase>")
            case .failed(let failures):
                lines.append(opening + ">")
                let summary = Self.escape(failures.first?.split(separator: "\n").first.map(String.init) ?? "failed")
                lines.append(
                    #"      <failure message="\#(summary)">\#(Self.escape(failures.joined(separator: "\n")))</failure>"#
                )
                lines.append("    </testcase>")
            }
        }
        lines += ["  </testsuite>", "</testsuites>", ""]
        return lines.joined(separator: "\n")
    }

    /// Text safe in XML content and attribute values: the five special characters escaped, and control
    /// characters XML 1.0 cannot carry replaced by U+FFFD.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\n", "\t": escaped.unicodeScalars.append(scalar)
            case "\r": escaped += "&#13;"
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                escaped += "\u{FFFD}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
