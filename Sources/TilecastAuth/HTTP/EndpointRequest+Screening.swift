// SPDX-License-Identifier: Apache-2.0

extension EndpointRequest {
    /// Whether the method is `POST`, the only one the endpoint serves (RFC 6749 §3.2).
    var isPost: Bool {
        method == "POST"
    }

    /// The refusal for a request whose transport is wrong — a browser origin, the media type, the size —
    /// or `nil` when the body may be parsed.
    func screeningError(configuration: EngineConfiguration) -> EndpointError? {
        if !isAllowedOrigin(configuration: configuration) {
            return EndpointError(.crossOriginRequest)
        }
        if !hasJSONContentType {
            return EndpointError(.unsupportedMediaType)
        }
        if body.count > configuration.maximumBodyBytes {
            return EndpointError(.bodyTooLarge(limit: configuration.maximumBodyBytes))
        }
        return nil
    }

    /// Whether the request is not a browser request from an origin the configuration does not allow.
    ///
    /// The endpoint sets a session cookie for whoever calls it, and browsers store cookies set in
    /// responses to cross-site requests that reach the server, so a page could sign its visitor into
    /// Studio as the attacker (login CSRF, RFC 6749 §10.12). Browsers send `Origin` on every `POST`
    /// (RFC 6454 §7, Fetch); the native app sends none. `Sec-Fetch-Site` is checked as well, for a
    /// user agent that reports the site but not the origin.
    private func isAllowedOrigin(configuration: EngineConfiguration) -> Bool {
        let origins = headers.values(for: "Origin")
        if !origins.isEmpty {
            return origins.count == 1 && configuration.allowedOrigins.contains(origins[0])
        }
        let sites = headers.values(for: "Sec-Fetch-Site")
        return sites.allSatisfy { $0 == "same-origin" || $0 == "none" }
    }

    /// Whether there is exactly one `Content-Type` and it is `application/json`, with no charset or the
    /// charset `utf-8` (or `utf8`) (RFC 8259 §8.1: JSON exchanged between systems is UTF-8).
    private var hasJSONContentType: Bool {
        let values = headers.values(for: "Content-Type")
        guard values.count == 1 else { return false }
        let parts = values[0].split(separator: ";", omittingEmptySubsequences: false)
        guard Self.equalsIgnoringCase(Self.trimmed(parts[0]), "application/json") else { return false }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, Self.equalsIgnoringCase(Self.trimmed(pair[0]), "charset") else { continue }
            var charset = Self.trimmed(pair[1])
            if charset.count >= 2, charset.hasPrefix("\""), charset.hasSuffix("\"") {
                charset = charset.dropFirst().dropLast()
            }
            // `utf8` is not a registered name, but common enough in clients to accept as the same.
            guard Self.equalsIgnoringCase(charset, "utf-8") || Self.equalsIgnoringCase(charset, "utf8") else {
                return false
            }
        }
        return true
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }

    private static func equalsIgnoringCase(_ text: Substring, _ expected: String) -> Bool {
        text.utf8.count == expected.utf8.count
            && zip(text.utf8, expected.utf8).allSatisfy { HTTPHeaders.asciiLowercase($0) == $1 }
    }
}
