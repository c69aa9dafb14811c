// SPDX-License-Identifier: Apache-2.0

/// Reads a `Content-Type` value (RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS parameter )`) byte by
/// byte, without splitting it into strings.
enum MediaType {
    /// Whether `value` is `application/json` — type and subtype without case — with no `charset`
    /// parameter or one of `utf-8`/`utf8` (quoted or not). Other parameters are ignored.
    static func isJSON(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            var index = 0
            func skipWhitespace() {
                while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            }
            /// Whether the bytes at the cursor are `word`, without case; advances past it if so.
            func consume(_ word: StaticString) -> Bool {
                let count = word.utf8CodeUnitCount
                guard bytes.count - index >= count else { return false }
                for offset in 0..<count where ASCII.lowercase(bytes[index + offset]) != word.utf8Start[offset] {
                    return false
                }
                index += count
                return true
            }
            /// Reads a token or quoted string and returns its range.
            func readValue() -> Range<Int> {
                if index < bytes.count, bytes[index] == 0x22 {
                    let start = index + 1
                    index = start
                    while index < bytes.count, bytes[index] != 0x22 { index += 1 }
                    defer { if index < bytes.count { index += 1 } }
                    return start..<index
                }
                let start = index
                while index < bytes.count, bytes[index] != 0x3B, bytes[index] != 0x20, bytes[index] != 0x09 {
                    index += 1
                }
                return start..<index
            }

            skipWhitespace()
            guard consume("application/json") else { return false }
            while true {
                skipWhitespace()
                guard index < bytes.count else { return true }
                guard bytes[index] == 0x3B else { return false }  // ";"
                index += 1
                skipWhitespace()
                guard index < bytes.count else { return true }
                let isCharset = consume("charset=")
                let range = readValue()
                if isCharset {
                    let charset = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                    guard ASCII.equalIgnoringCase(charset, "utf-8") || ASCII.equalIgnoringCase(charset, "utf8") else {
                        return false
                    }
                } else {
                    // Another parameter: skip the rest of it.
                    while index < bytes.count, bytes[index] != 0x3B { index += 1 }
                }
            }
        }
    }
}
