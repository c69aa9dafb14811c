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
        guard headers.count(of: "Content-Type") == 1, let value = headers["Content-Type"] else { return false }
        return MediaType.isJSON(value)
    }
}
