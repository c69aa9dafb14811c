// SPDX-License-Identifier: Apache-2.0

/// One HTTP header field: a name and a value, as the embedding server received or will send it.
public struct HeaderField: Hashable, Sendable {
    /// The field name. Lookups compare names case-insensitively (RFC 9110 §5.1).
    public var name: String
    /// The field value, without leading or trailing whitespace.
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HeaderField: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Whether the field can carry a secret — an access token, a session id — and must not be printed.
    public var isSensitive: Bool {
        ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains { ASCII.equalIgnoringCase(name, $0) }
    }

    /// `name: value`, with the value masked for ``isSensitive`` fields.
    public var description: String {
        "\(name): \(isSensitive ? "********" : value)"
    }

    public var debugDescription: String {
        "HeaderField(\(description))"
    }

    /// A mirror that masks the value of ``isSensitive`` fields, so `dump` cannot print a secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "value": isSensitive ? "********" : value], displayStyle: .struct)
    }
}
