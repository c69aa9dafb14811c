// SPDX-License-Identifier: Apache-2.0

/// Writes a JSON document into a byte buffer: the few shapes the endpoint answers with, without the cost
/// of a general-purpose encoder.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends JSON punctuation or a literal the caller knows to be valid.
    mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
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
        for byte in text.utf8 {
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
        bytes.append(UInt8(ascii: "\""))
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
