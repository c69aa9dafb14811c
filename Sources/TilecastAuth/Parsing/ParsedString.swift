// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON string as ``JSONObjectParser`` finds it in the body it is parsing: where its bytes lie when it
/// has no escapes — almost every string of a request — or its bytes decoded.
///
/// A string without escapes is two offsets, which copying retains nothing: the parser reports every member
/// name and value this way, and only the values a caller keeps become ``JSONText`` (``text(in:)``). Each
/// `JSONText` made while parsing retained the body, and each copy of it — into the list of names for
/// duplicate detection, into the request's parameters — retained it again.
enum ParsedString {
    /// The bytes at these offsets of the body, which are the string's own: no escapes, valid UTF-8.
    case plain(Range<Int>)
    /// The string's bytes with its escapes decoded, valid UTF-8.
    case decoded([UInt8])

    var isEmpty: Bool {
        switch self {
        case .plain(let range): range.isEmpty
        case .decoded(let bytes): bytes.isEmpty
        }
    }

    /// Calls `body` with the string's bytes, read from `source` — the body it was parsed from — when
    /// they are plain.
    @inline(__always)
    func withBytes<Result>(
        in source: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        switch self {
        case .plain(let range): body(UnsafeRawBufferPointer(rebasing: source[range]))
        case .decoded(let bytes): bytes.withUnsafeBytes(body)
        }
    }

    /// Whether the string has exactly the UTF-8 bytes of `literal`.
    func equals(_ literal: StaticString, in source: UnsafeRawBufferPointer) -> Bool {
        let expected = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        return withBytes(in: source) { Self.equal($0, expected) }
    }

    /// Whether the string has exactly the UTF-8 bytes of `other`.
    func equals(_ other: String, in source: UnsafeRawBufferPointer) -> Bool {
        other.withLentUTF8 { other in withBytes(in: source) { Self.equal($0, UnsafeRawBufferPointer(other)) } }
    }

    /// Whether the two strings, both parsed from `source`, have the same bytes.
    func equals(_ other: ParsedString, in source: UnsafeRawBufferPointer) -> Bool {
        withBytes(in: source) { mine in other.withBytes(in: source) { Self.equal(mine, $0) } }
    }

    /// The string as a ``JSONText``, for a value the caller keeps past the parse: a slice of `source`,
    /// the body it was parsed from, when plain.
    func text(in source: [UInt8]) -> JSONText {
        switch self {
        case .plain(let range): JSONText(source[range])
        case .decoded(let bytes): JSONText(bytes[...])
        }
    }

    /// The string's bytes in an array of their own.
    func bytes(in source: UnsafeRawBufferPointer) -> [UInt8] {
        switch self {
        case .plain(let range): Array(source[range])
        case .decoded(let bytes): bytes
        }
    }

    private static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }
}

/// A member value as ``JSONObjectParser`` reports it while parsing: a string is a ``ParsedString`` of the
/// body; ``JSONValue`` is the same value once it no longer needs the body beside it.
enum ParsedValue {
    case string(ParsedString)
    case number
    case bool(Bool)
    case null
    case object
    case array
}

extension JSONValue {
    /// `value`, which was parsed from `source`, with its string as a ``JSONText``.
    init(_ value: ParsedValue, in source: [UInt8]) {
        switch value {
        case .string(let string): self = .string(string.text(in: source))
        case .number: self = .number
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        case .object: self = .object
        case .array: self = .array
        }
    }
}
