// SPDX-License-Identifier: Apache-2.0

/// Writes the small JSON request bodies the tool sends, with members in a stable order.
enum JSONText {
    static func object(_ members: [String: Any]) -> String {
        let order = [
            "grant_type", "client_id", "code", "redirect_uri", "code_verifier", "refresh_token", "studio_session",
        ]
        let names = members.keys.sorted {
            (order.firstIndex(of: $0) ?? order.count, $0) < (order.firstIndex(of: $1) ?? order.count, $1)
        }
        return "{" + names.map { "\(string($0)):\(value(members[$0]!))" }.joined(separator: ",") + "}"
    }

    private static func value(_ value: Any) -> String {
        switch value {
        case let flag as Bool: flag ? "true" : "false"
        case let number as Int: String(number)
        case let text as String: string(text)
        default: "null"
        }
    }

    private static func string(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case _ where scalar.value < 0x20:
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}
