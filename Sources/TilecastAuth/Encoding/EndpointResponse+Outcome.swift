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
        // Sized for every field a response can carry, so that appending the last never copies the array.
        var fields: [HeaderField] = []
        fields.reserveCapacity(6)
        fields.append(HeaderField(name: "Content-Type", value: "application/json"))
        fields.append(HeaderField(name: "Cache-Control", value: "no-store"))
        fields.append(HeaderField(name: "Pragma", value: "no-cache"))
        switch outcome {
        case .success(let credential, let cookie):
            // Names, punctuation, `true`/`false` and `expires_in`'s at most 20 digits: under 160 bytes.
            var capacity = 160
            if let credential {
                capacity += 2 * (SecretKind.encodedLength + 2) + JSONWriter.escapedCapacity(credential.scope.rawValue)
            }
            let body = JSONWriter.document(capacity: capacity) { json in
                json.raw("{\"data\":{")
                json.name("authenticated")
                json.bool(cookie != nil)
                if let credential {
                    json.raw(",")
                    json.name("credential")
                    json.raw("{")
                    json.member("token_type", "Bearer", first: true)
                    json.member("access_token", token: credential.accessToken)
                    json.raw(",")
                    json.name("expires_in")
                    json.integer(credential.expiresIn)
                    json.member("refresh_token", token: credential.refreshToken)
                    json.member("scope", credential.scope.rawValue)
                    json.raw("}")
                }
                json.raw("}}")
            }
            if let cookie {
                fields.append(HeaderField(name: "Set-Cookie", value: cookie.headerValue))
            }
            self.init(status: 200, headers: HeaderFields(fields), body: body)

        case .refused(let error):
            fields.append(contentsOf: error.headerFields)
            let code = error.code.description
            let message = error.message
            // Two names and the braces: under 40 bytes.
            let capacity = 40 + JSONWriter.escapedCapacity(code) + JSONWriter.escapedCapacity(message)
            let body = JSONWriter.document(capacity: capacity) { json in
                json.raw("{")
                json.member("error", code, first: true)
                json.member("error_description", message)
                json.raw("}")
            }
            self.init(status: error.status, headers: HeaderFields(fields), body: body)
        }
    }
}
