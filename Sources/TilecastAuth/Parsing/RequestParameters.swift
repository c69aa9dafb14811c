// SPDX-License-Identifier: Apache-2.0

/// The top-level members of a request body, read by name.
struct RequestParameters {
    let members: [(name: JSONText, value: JSONValue)]

    private func value(_ name: StaticString) -> JSONValue? {
        members.first { $0.name.equals(name) }?.value
    }

    /// The string value of `name`; `nil` when absent, `null` or empty.
    func string(_ name: StaticString) throws(EndpointError) -> JSONText? {
        switch value(name) {
        case nil, .null: return nil
        case .string(let text): return text.isEmpty ? nil : text
        case .number, .bool, .object, .array: throw EndpointError(.invalidParameterType(name: "\(name)"))
        }
    }

    /// The boolean value of `name`; `nil` when absent or `null`.
    func bool(_ name: StaticString) throws(EndpointError) -> Bool? {
        switch value(name) {
        case nil, .null: return nil
        case .bool(let flag): return flag
        case .string(let text) where text.isEmpty: return nil
        case .string, .number, .object, .array: throw EndpointError(.invalidParameterType(name: "\(name)"))
        }
    }
}
