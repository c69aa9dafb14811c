// SPDX-License-Identifier: Apache-2.0

/// Reads a `Content-Type` value byte by byte, without splitting it into strings:
/// `type "/" subtype parameters` (RFC 9110 §8.3.1), where `parameters = *( OWS ";" OWS [ parameter ] )`,
/// `parameter = token "=" ( token / quoted-string )` (§5.6.6) and a quoted string may hold `;`, `=` and
/// escaped quotes (§5.6.4) — so a parameter's value is never mistaken for another parameter.
enum MediaType {
    /// Whether `value` is `application/json` — type and subtype without case — with no `charset`
    /// parameter or one of `utf-8`/`utf8` (as a token or a quoted string, without case). Other
    /// parameters are ignored; a value that does not follow the grammar is not JSON.
    static func isJSON(_ value: String) -> Bool {
        value.withLentUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            reader.skipWhitespace()
            guard reader.consume("application/json") else { return false }
            while true {
                reader.skipWhitespace()
                guard !reader.isAtEnd else { return true }
                guard reader.consume(";") else { return false }
                reader.skipWhitespace()
                // An empty parameter (`;;` or a trailing `;`) is allowed.
                if reader.isAtEnd || reader.peek == UInt8(ascii: ";") { continue }
                let isCharset = reader.consume("charset=")
                if !isCharset {
                    guard reader.skipToken(), reader.consume("=") else { return false }
                }
                guard let parameterValue = reader.readParameterValue() else { return false }
                if isCharset && !(Self.isUTF8(parameterValue)) { return false }
            }
        }
    }

    /// `utf-8` or `utf8`, without case.
    private static func isUTF8(_ bytes: [UInt8]) -> Bool {
        let lowered = bytes.map(ASCII.lowercase)
        return lowered.elementsEqual("utf-8".utf8) || lowered.elementsEqual("utf8".utf8)
    }

    /// A cursor over the field's bytes.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index >= bytes.count }
        var peek: UInt8? { isAtEnd ? nil : bytes[index] }

        /// Skips optional whitespace (RFC 9110 §5.6.3: spaces and horizontal tabs).
        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// Whether the bytes at the cursor are `word`, without case; advances past it if so.
        mutating func consume(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            guard ASCII.equalIgnoringCase(bytes.baseAddress! + index, word.utf8Start, count: count) else {
                return false
            }
            index += count
            return true
        }

        /// Skips a token (RFC 9110 §5.6.2); returns whether there was one.
        mutating func skipToken() -> Bool {
            let start = index
            while let byte = peek, ASCII.isTokenCharacter(byte) { index += 1 }
            return index > start
        }

        /// Reads a token or a quoted string (RFC 9110 §5.6.4), unescaping quoted pairs; `nil` when neither
        /// is there or a quoted string does not end.
        mutating func readParameterValue() -> [UInt8]? {
            guard peek == 0x22 else {
                let start = index
                guard skipToken() else { return nil }
                return Array(bytes[start..<index])
            }
            index += 1
            var value: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case 0x22:
                    return value
                case 0x5C:  // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
                    guard let escaped = peek, escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else { return nil }
                    value.append(escaped)
                    index += 1
                case 0x09, 0x20, 0x21, 0x23...0x5B, 0x5D...0x7E, 0x80...0xFF:  // qdtext
                    value.append(byte)
                default:
                    return nil
                }
            }
            return nil
        }

    }
}
