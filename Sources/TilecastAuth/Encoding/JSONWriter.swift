// SPDX-License-Identifier: Apache-2.0

/// Writes a JSON document into a byte buffer: the few shapes the endpoint answers with, without the cost
/// of a general-purpose encoder.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends JSON punctuation or a literal the caller knows to be valid.
    ///
    /// Byte by byte: the pieces are a few bytes long, where a loop beats a call to `memcpy`.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        let start = text.utf8Start
        for offset in 0..<text.utf8CodeUnitCount {
            bytes.append(start[offset])
        }
    }

    /// Appends `"name":`.
    mutating func name(_ name: StaticString) {
        raw("\"")
        raw(name)
        raw("\":")
    }

    /// Appends `"name":"value"`, preceded by a comma unless it is the object's first member.
    mutating func member(_ name: StaticString, _ value: String, first: Bool = false) {
        if !first {
            raw(",")
        }
        self.name(name)
        string(value)
    }

    /// Appends a string with the escapes RFC 8259 §7 requires.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            let needsEscape = utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            if needsEscape {
                appendEscaped(utf8)
            } else {
                bytes.append(contentsOf: utf8)
            }
        }
        bytes.append(UInt8(ascii: "\""))
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
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
    }

    /// Appends a decimal integer.
    mutating func integer(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends `true` or `false`.
    mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }
}
