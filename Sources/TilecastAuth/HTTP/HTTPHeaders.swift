// SPDX-License-Identifier: Apache-2.0

/// An ordered list of header fields with case-insensitive lookup (RFC 9110 §5.1).
///
/// Repeated fields stay separate entries, so a server can hand over exactly what arrived — two
/// `Origin` fields, say — and TilecastAuth can refuse what is ambiguous instead of guessing.
public struct HTTPHeaders: Hashable, Sendable {
    /// The fields in order.
    public private(set) var fields: [HTTPHeader]

    public init(_ fields: [HTTPHeader] = []) {
        self.fields = fields
    }

    /// Builds headers from name–value pairs, in order.
    public init(_ pairs: [(name: String, value: String)]) {
        self.fields = pairs.map { HTTPHeader(name: $0.name, value: $0.value) }
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func append(name: String, value: String) {
        fields.append(HTTPHeader(name: name, value: value))
    }

    /// The values of every field called `name`, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        for field in fields where ASCII.equalIgnoringCase(field.name, name) {
            values.append(field.value)
        }
        return values
    }

    /// The value of the first field called `name`; `nil` when there is none.
    public subscript(name: String) -> String? {
        for field in fields where ASCII.equalIgnoringCase(field.name, name) {
            return field.value
        }
        return nil
    }

    /// How many fields are called `name`.
    public func count(of name: String) -> Int {
        var count = 0
        for field in fields where ASCII.equalIgnoringCase(field.name, name) {
            count += 1
        }
        return count
    }
}

extension HTTPHeaders: Sequence {
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> {
        fields.makeIterator()
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Builds headers from a literal; the fields keep the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { HTTPHeader(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// The fields in order, with the values of secret-bearing fields (`Authorization`, `Cookie`,
    /// `Set-Cookie`) masked.
    public var description: String {
        "[" + fields.map(\.description).joined(separator: ", ") + "]"
    }
}
