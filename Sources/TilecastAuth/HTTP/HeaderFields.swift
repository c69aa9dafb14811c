// SPDX-License-Identifier: Apache-2.0

/// An ordered list of header fields with case-insensitive lookup (RFC 9110 §5.1).
///
/// Repeated fields stay separate entries, so a server can hand over exactly what arrived — two
/// `Origin` fields, say — and TilecastAuth can refuse what is ambiguous instead of guessing.
///
/// The name is neither `HTTPHeaders`, which `NIOHTTP1` gives every Vapor, Hummingbird 1 and
/// AsyncHTTPClient user, nor `HTTPFields`, which swift-http-types gives Hummingbird 2's: a server that
/// imports either names this type without qualifying it. Its subscript answers the *first* value of a
/// name, where NIO's answers all of them; ``values(for:)`` answers all.
public struct HeaderFields: Hashable, Sendable {
    /// The fields in order.
    public private(set) var fields: [HeaderField]

    public init(_ fields: [HeaderField] = []) {
        self.fields = fields
    }

    /// Builds headers from name–value pairs, in order.
    public init(_ pairs: [(name: String, value: String)]) {
        self.fields = pairs.map { HeaderField(name: $0.name, value: $0.value) }
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func append(name: String, value: String) {
        fields.append(HeaderField(name: name, value: value))
    }

    /// The values of every field called `name`, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        for index in fields.indices where ASCII.equalIgnoringCase(fields[index].name, name) {
            values.append(fields[index].value)
        }
        return values
    }

    /// The value of the first field called `name`; `nil` when there is none.
    public subscript(name: String) -> String? {
        for index in fields.indices where ASCII.equalIgnoringCase(fields[index].name, name) {
            return fields[index].value
        }
        return nil
    }

    // The fields are read by index, where they lie: `for field in fields` copied each one, retaining and
    // releasing its name and value, on every scan of every request.

    /// How many fields are called `name`.
    public func count(of name: String) -> Int {
        var count = 0
        for index in fields.indices where ASCII.equalIgnoringCase(fields[index].name, name) {
            count += 1
        }
        return count
    }
}

extension HeaderFields: Sequence {
    public func makeIterator() -> IndexingIterator<[HeaderField]> {
        fields.makeIterator()
    }
}

extension HeaderFields: ExpressibleByDictionaryLiteral {
    /// Builds headers from a literal; the fields keep the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { HeaderField(name: $0.0, value: $0.1) }
    }
}

extension HeaderFields: CustomStringConvertible {
    /// The fields in order, with the values of secret-bearing fields (`Authorization`, `Cookie`,
    /// `Set-Cookie`) masked.
    public var description: String {
        "[" + fields.map(\.description).joined(separator: ", ") + "]"
    }
}
