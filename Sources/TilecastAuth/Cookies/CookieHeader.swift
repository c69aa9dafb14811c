// SPDX-License-Identifier: Apache-2.0

/// Reads cookie values out of a request's `Cookie` fields (rfc6265bis §4.2.1, §5.8.3).
enum CookieHeader {
    /// The values of every cookie named exactly `name` — byte for byte, so that `__host-x` is not read as
    /// `__Host-x` (rfc6265bis §5.4) — across all the given `Cookie` field values, in order.
    ///
    /// Each field is split on `;`, each pair trimmed of spaces and tabs and split at its first `=`; a
    /// value in double quotes loses them (rfc6265bis §5.8.3). The work is on the field's UTF-8 bytes.
    static func values(named name: String, in fields: [String]) -> [String] {
        var found: [String] = []
        name.withLentUTF8 { nameBytes in
            for field in fields {
                field.withLentUTF8 { bytes in
                    var start = 0
                    while start <= bytes.count {
                        var end = start
                        while end < bytes.count && bytes[end] != UInt8(ascii: ";") { end += 1 }
                        if let value = value(in: UnsafeBufferPointer(rebasing: bytes[start..<end]), named: nameBytes) {
                            found.append(value)
                        }
                        start = end + 1
                    }
                }
            }
        }
        return found
    }

    /// The value of one `name=value` pair if its name is `name`.
    private static func value(in pair: UnsafeBufferPointer<UInt8>, named name: UnsafeBufferPointer<UInt8>) -> String? {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var lower = 0
        var upper = pair.count
        while lower < upper && isWhitespace(pair[lower]) { lower += 1 }
        while upper > lower && isWhitespace(pair[upper - 1]) { upper -= 1 }
        guard let equals = pair[lower..<upper].firstIndex(of: UInt8(ascii: "=")) else { return nil }
        guard equals - lower == name.count, pair[lower..<equals].elementsEqual(name) else { return nil }
        var valueStart = equals + 1
        var valueEnd = upper
        if valueEnd - valueStart >= 2, pair[valueStart] == UInt8(ascii: "\""), pair[valueEnd - 1] == UInt8(ascii: "\"")
        {
            valueStart += 1
            valueEnd -= 1
        }
        return String(decoding: UnsafeBufferPointer(rebasing: pair[valueStart..<valueEnd]), as: UTF8.self)
    }
}
