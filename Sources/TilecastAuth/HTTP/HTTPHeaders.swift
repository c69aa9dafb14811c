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
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// The value of the only field called `name`; `nil` when there is none.
    public subscript(name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// How many fields are called `name`.
    public func count(of name: String) -> Int {
        fields.reduce(0) { $0 + (Self.namesMatch($1.name, name) ? 1 : 0) }
    }

    /// Compares two field names ASCII-case-insensitively without allocating.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count
            && lhs.utf8.elementsEqual(rhs.utf8) { asciiLowercase($0) == asciiLowercase($1) }
    }

    @inline(__always)
    static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
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
