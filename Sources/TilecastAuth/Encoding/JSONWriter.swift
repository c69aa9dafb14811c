// SPDX-License-Identifier: Apache-2.0

/// Writes a JSON document into a byte buffer: the few shapes the endpoint answers with, without the cost
/// of a general-purpose encoder.
///
/// The document is written into a temporary buffer of a size the caller bounds from what it will write
/// (``escapedCapacity(_:)``) — on the stack up to 1 KiB, which every answer of the endpoint fits unless its
/// scope or message is unusually long, and on the heap past it — with no check of uniqueness or growth per
/// byte, and copied once into an array of its exact size.
struct JSONWriter {
    private var output: ByteWriter

    private init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        output = ByteWriter(buffer, owner: "JSONWriter")
    }

    /// The most `string` can take escaped at worst (`\u00XX`, six bytes for one), with its quotes: a
    /// caller's capacity is this for each string it writes, plus its punctuation, names and numbers.
    static func escapedCapacity(_ string: String) -> Int {
        6 * string.utf8.count + 2
    }

    /// The bytes `write` writes, which must fit in `capacity` bytes; writing more traps, before any byte
    /// lands outside the buffer.
    ///
    /// Not `[UInt8](unsafeUninitializedCapacity:initializingWith:)`, which writes into the array itself:
    /// it allocates through the standard library's unspecialized `_allocateBufferUninitialized`, which
    /// looks up the metadata of `_ContiguousArrayStorage<UInt8>` in the runtime's generic cache on every
    /// call — 361 of the 526 instructions of each response's allocation, counted with callgrind. The copy
    /// of the document from the temporary buffer costs a few dozen, and the array from a buffer is
    /// allocated by code specialized for bytes.
    static func document(capacity: Int, _ write: (inout JSONWriter) -> Void) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(capacity, 1)) { buffer in
            var writer = JSONWriter(buffer)
            write(&writer)
            return [UInt8](UnsafeBufferPointer(rebasing: buffer[..<writer.output.count]))
        }
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        output.write(byte)
    }

    /// Appends JSON punctuation or a literal the caller knows to be valid.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        output.write(text)
    }

    /// Appends `"name":`.
    ///
    /// Inlined into each caller, where the name's length is a constant: its copy is then a few moves
    /// instead of a call of `memcpy`, as is the `":"` after it.
    @inline(__always)
    mutating func name(_ name: StaticString) {
        append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }

    /// Appends `"name":"value"`, preceded by a comma unless it is the object's first member.
    @inline(__always)
    mutating func member(_ name: StaticString, _ value: String, first: Bool = false) {
        if !first {
            append(UInt8(ascii: ","))
        }
        self.name(name)
        string(value)
    }

    /// Appends `,"name":"token"` for a secret. Its text is the kind's prefix and base64url — minted that
    /// way, or checked for that shape when presented — none of which JSON escapes (RFC 8259 §7), so it is
    /// copied without the scan ``string(_:)`` makes.
    @inline(__always)
    mutating func member(_ name: StaticString, token: OpaqueToken) {
        append(UInt8(ascii: ","))
        self.name(name)
        append(UInt8(ascii: "\""))
        token.withUnredactedBytes { output.write($0) }
        append(UInt8(ascii: "\""))
    }

    /// Appends `,"name":"scope"`. A scope holds only RFC 6749 §3.3's characters — space, `%x21`,
    /// `%x23-5B` and `%x5D-7E`, checked when it is made (``Scope/init(_:)``) — none of which JSON escapes
    /// (RFC 8259 §7: the quote, the backslash and control characters), so it is copied without the scan
    /// ``string(_:)`` makes.
    @inline(__always)
    mutating func member(_ name: StaticString, scope: Scope) {
        append(UInt8(ascii: ","))
        self.name(name)
        append(UInt8(ascii: "\""))
        scope.rawValue.withLentUTF8 { utf8 in
            if let start = utf8.baseAddress {
                output.write(start, count: utf8.count)
            }
        }
        append(UInt8(ascii: "\""))
    }

    /// Appends a string with the escapes RFC 8259 §7 requires.
    mutating func string(_ text: String) {
        append(UInt8(ascii: "\""))
        text.withLentUTF8 { utf8 in
            let needsEscape = utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            if needsEscape {
                appendEscaped(utf8)
            } else if let start = utf8.baseAddress {
                output.write(start, count: utf8.count)
            }
        }
        append(UInt8(ascii: "\""))
    }

    /// The slow path of ``string(_:)``: byte by byte, escaping as it goes.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x00..<0x20:
                let hex: StaticString = "0123456789abcdef"
                raw("\\u00")
                append(hex.utf8Start[Int(byte >> 4)])
                append(hex.utf8Start[Int(byte & 0x0F)])
            default: append(byte)
            }
        }
    }

    /// Appends a decimal integer: at most 20 bytes.
    mutating func integer(_ value: Int) {
        output.writeDecimal(value)
    }

    /// Appends `true` or `false`.
    mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }
}
