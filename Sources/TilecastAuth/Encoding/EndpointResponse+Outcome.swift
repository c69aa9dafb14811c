// SPDX-License-Identifier: Apache-2.0

extension EndpointResponse {
    /// Renders an outcome as the HTTP response.
    ///
    /// Success: `{"data":{"authenticated":…,"credential":{…}}}`, with `authenticated` true exactly when
    /// the response sets the cookie. Refusal: `{"error":"<code>","error_description":"…"}`, the
    /// RFC 6749 §5.2 members. Every response carries `Content-Type: application/json`,
    /// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1), and a refusal the header
    /// fields ``EndpointError/headerFields`` names.
    init(_ outcome: ExchangeOutcome) {
        var headers = HeaderFields([
            HeaderField(name: "Content-Type", value: "application/json"),
            HeaderField(name: "Cache-Control", value: "no-store"),
            HeaderField(name: "Pragma", value: "no-cache"),
        ])
        switch outcome {
        case .success(let credential, let cookie):
            // Names, punctuation, `true`/`false` and `expires_in`'s at most 20 digits: under 160 bytes.
            let strings =
                credential.map { [$0.accessToken.unredactedValue, $0.refreshToken.unredactedValue, $0.scope.rawValue] }
                ?? []
            let body = JSONWriter.document(capacity: JSONWriter.capacity(fixed: 160, strings: strings)) { json in
                json.raw("{\"data\":{")
                json.name("authenticated")
                json.bool(cookie != nil)
                if let credential {
                    json.raw(",")
                    json.name("credential")
                    json.raw("{")
                    json.member("token_type", "Bearer", first: true)
                    json.member("access_token", strings[0])
                    json.raw(",")
                    json.name("expires_in")
                    json.integer(credential.expiresIn)
                    json.member("refresh_token", strings[1])
                    json.member("scope", strings[2])
                    json.raw("}")
                }
                json.raw("}}")
            }
            if let cookie {
                headers.append(name: "Set-Cookie", value: cookie.headerValue)
            }
            self.init(status: 200, headers: headers, body: body)

        case .refused(let error):
            for field in error.headerFields {
                headers.append(name: field.name, value: field.value)
            }
            let code = error.code.description
            let message = error.message
            // Two names and the braces: under 40 bytes.
            let body = JSONWriter.document(capacity: JSONWriter.capacity(fixed: 40, strings: [code, message])) { json in
                json.raw("{")
                json.member("error", code, first: true)
                json.member("error_description", message)
                json.raw("}")
            }
            self.init(status: error.status, headers: headers, body: body)
        }
    }
}
