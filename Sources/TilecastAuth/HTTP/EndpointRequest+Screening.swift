// SPDX-License-Identifier: Apache-2.0

extension EndpointRequest {
    /// Whether the method is `POST`, the only one the endpoint serves (RFC 6749 §3.2).
    var isPost: Bool {
        method == "POST"
    }

    /// The refusal for a request whose transport is wrong — a browser origin, the media type, the size —
    /// or `nil` when the body may be parsed.
    ///
    /// Given the two settings it reads (``EngineConfiguration/allowedOrigins`` and
    /// ``EngineConfiguration/maximumBodyBytes``), not the configuration: passed the configuration, it was
    /// given a copy of all 216 bytes of it on every request.
    func screeningError(allowedOrigins: Set<String>, maximumBodyBytes: Int) -> EndpointError? {
        let screened = ScreenedFields(headers)
        if !screened.isAllowedOrigin(allowedOrigins) {
            return EndpointError(.crossOriginRequest)
        }
        if !screened.hasJSONContentType {
            return EndpointError(.unsupportedMediaType)
        }
        if body.count > maximumBodyBytes {
            return EndpointError(.bodyTooLarge(limit: maximumBodyBytes))
        }
        return nil
    }
}

/// The header fields screening reads — `Origin`, `Sec-Fetch-Site`, `Content-Type` — gathered in one pass,
/// each field's name compared, without case (RFC 9110 §5.1), only with the one of the three of its length.
/// Asking the fields for each name, as screening did, scanned them four times.
private struct ScreenedFields {
    var originCount = 0
    var firstOrigin: String?
    /// Whether every `Sec-Fetch-Site` is `same-origin` or `none`; true when there is none.
    var sitesAreOwn = true
    var contentTypeCount = 0
    var firstContentType: String?

    init(_ headers: HeaderFields) {
        let fields = headers.fields
        for index in fields.indices {
            let name = fields[index].name
            switch name.utf8.count {
            case 6 where ASCII.equalIgnoringCase(name, "Origin"):
                if originCount == 0 { firstOrigin = fields[index].value }
                originCount += 1
            case 12 where ASCII.equalIgnoringCase(name, "Content-Type"):
                if contentTypeCount == 0 { firstContentType = fields[index].value }
                contentTypeCount += 1
            case 14 where ASCII.equalIgnoringCase(name, "Sec-Fetch-Site"):
                let site = fields[index].value
                sitesAreOwn = sitesAreOwn && (site == "same-origin" || site == "none")
            default:
                break
            }
        }
    }

    /// Whether the request is not a browser request from an origin outside `allowedOrigins`.
    ///
    /// The endpoint sets a session cookie for whoever calls it, and browsers store cookies set in
    /// responses to cross-site requests that reach the server, so a page could sign its visitor into
    /// Studio as the attacker (login CSRF, RFC 6749 §10.12). Browsers send `Origin` on every `POST`
    /// (RFC 6454 §7, Fetch); the native app sends none. `Sec-Fetch-Site` is checked as well, for a
    /// user agent that reports the site but not the origin.
    func isAllowedOrigin(_ allowedOrigins: Set<String>) -> Bool {
        if let firstOrigin {
            return originCount == 1 && allowedOrigins.contains(firstOrigin)
        }
        return sitesAreOwn
    }

    /// Whether there is exactly one `Content-Type` and it is `application/json`, with no charset or the
    /// charset `utf-8` (or `utf8`) (RFC 8259 §8.1: JSON exchanged between systems is UTF-8).
    var hasJSONContentType: Bool {
        guard contentTypeCount == 1, let firstContentType else { return false }
        return MediaType.isJSON(firstContentType)
    }
}
