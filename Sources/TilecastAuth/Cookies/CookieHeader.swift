// SPDX-License-Identifier: Apache-2.0

/// Reads cookie values out of a request's `Cookie` fields (rfc6265bis §4.2.1, §5.8.3).
enum CookieHeader {
    /// The values of every cookie named exactly `name` — byte for byte, so that `__host-x` is not read as
    /// `__Host-x` (rfc6265bis §5.4) — across all the given `Cookie` field values, in order.
    static func values(named name: String, in fields: [String]) -> [String] {
        var found: [String] = []
        for field in fields {
            for pair in field.split(separator: ";") {
                var pair = pair
                while pair.first == " " || pair.first == "\t" { pair = pair.dropFirst() }
                while pair.last == " " || pair.last == "\t" { pair = pair.dropLast() }
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let cookieName = pair[..<equals]
                guard cookieName.utf8.elementsEqual(name.utf8) else { continue }
                var value = pair[pair.index(after: equals)...]
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = value.dropFirst().dropLast()
                }
                found.append(String(value))
            }
        }
        return found
    }
}
