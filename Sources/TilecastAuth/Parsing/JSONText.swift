// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of a JSON string — a member name or a string value — as valid UTF-8 bytes with its escapes
/// decoded.
///
/// A string without escapes is a slice of the request body itself, so parsing copies nothing: a code,
/// a verifier or a refresh token goes from the body to SHA-256 without ever becoming a `String`.
/// Comparisons are byte for byte (RFC 6749 §3.1.2 and §4.1.3 compare URIs and identifiers as strings,
/// and canonical equivalence would make look-alikes equal).
struct JSONText: Hashable, Sendable {
    /// The UTF-8 bytes.
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    var isEmpty: Bool { bytes.isEmpty }

    /// The text as a `String`, for the rare place that needs one.
    var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Calls `body` with the bytes, without copying them.
    @inline(__always)
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes(body)
    }

    /// Whether the text has exactly the UTF-8 bytes of `other`.
    func equals(_ other: String) -> Bool {
        other.withLentUTF8 { equals(UnsafeRawBufferPointer($0)) }
    }

    /// Whether the text has exactly the UTF-8 bytes of `other`.
    func equals(_ other: StaticString) -> Bool {
        equals(UnsafeRawBufferPointer(start: other.utf8Start, count: other.utf8CodeUnitCount))
    }

    private func equals(_ other: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count == other.count else { return false }
        guard !bytes.isEmpty else { return true }
        return withBytes { memcmp($0.baseAddress!, other.baseAddress!, other.count) == 0 }
    }
}

extension JSONText: ExpressibleByStringLiteral {
    /// The UTF-8 bytes of `string`.
    init(_ string: String) {
        self.init(ArraySlice(string.utf8))
    }

    /// A text from a literal, for tests.
    init(stringLiteral value: String) {
        self.init(value)
    }
}

extension JSONText: CustomStringConvertible {
    /// The length only: the text may be a secret.
    var description: String { "JSONText(\(bytes.count) bytes)" }
}
