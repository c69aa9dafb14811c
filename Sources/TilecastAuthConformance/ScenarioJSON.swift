// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A JSON value: what scenario files are made of, and what response bodies are compared as.
public indirect enum ScenarioJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ScenarioJSON])
    case object([String: ScenarioJSON])

    /// Parses JSON text; `nil` when it is not JSON.
    public init?(data: Data) {
        guard let value = try? JSONDecoder().decode(ScenarioJSON.self, from: data) else { return nil }
        self = value
    }

    /// The value at a dot-separated path (`data.credential.scope`, `statuses.200`, `items.0`); `nil` when
    /// there is none.
    public func value(at path: String) -> ScenarioJSON? {
        guard !path.isEmpty else { return self }
        var current = self
        for segment in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            switch current {
            case .object(let members):
                guard let next = members[segment] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(segment), items.indices.contains(index) else { return nil }
                current = items[index]
            case .null, .bool, .number, .string:
                return nil
            }
        }
        return current
    }

    /// The members of an object, or `nil`.
    public var objectValue: [String: ScenarioJSON]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The string, or `nil`.
    public var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The Boolean, or `nil`.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { flag } else { nil }
    }

    /// The number, or `nil`.
    public var numberValue: Double? {
        if case .number(let number) = self { number } else { nil }
    }

    /// The number as an integer, or `nil` when it is not a whole number.
    public var intValue: Int? {
        guard case .number(let number) = self, number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int(number)
    }

    /// The items of an array, or `nil`.
    public var arrayValue: [ScenarioJSON]? {
        if case .array(let items) = self { items } else { nil }
    }

    /// The value as text: the string itself, or compact JSON for anything else.
    public var text: String {
        if case .string(let text) = self { text } else { description }
    }
}

extension ScenarioJSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([ScenarioJSON].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: ScenarioJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let items): try container.encode(items)
        case .object(let members): try container.encode(members)
        }
    }
}

extension ScenarioJSON: CustomStringConvertible {
    /// Compact JSON with sorted keys, so two equal values print the same.
    public var description: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "<unprintable>" }
        return String(decoding: data, as: UTF8.self)
    }
}
