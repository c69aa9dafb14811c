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
            var json = JSONWriter(capacity: 256)
            json.raw("{\"data\":{")
            json.name("authenticated")
            json.bool(cookie != nil)
            if let credential {
                json.raw(",")
                json.name("credential")
                json.raw("{")
                json.member("token_type", "Bearer", first: true)
                json.member("access_token", credential.accessToken.unredactedValue)
                json.raw(",")
                json.name("expires_in")
                json.integer(credential.expiresIn)
                json.member("refresh_token", credential.refreshToken.unredactedValue)
                json.member("scope", credential.scope.rawValue)
                json.raw("}")
            }
            json.raw("}}")
            if let cookie {
                headers.append(name: "Set-Cookie", value: cookie.headerValue)
            }
            self.init(status: 200, headers: headers, body: json.bytes)

        case .refused(let error):
            for field in error.headerFields {
                headers.append(name: field.name, value: field.value)
            }
            var json = JSONWriter(capacity: 160)
            json.raw("{")
            json.member("error", error.code.description, first: true)
            json.member("error_description", error.message)
            json.raw("}")
            self.init(status: error.status, headers: headers, body: json.bytes)
        }
    }
}
