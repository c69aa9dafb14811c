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
        switch outcome {
        case .success(let credential, let cookie):
            // The cookie is not captured for one bit of it: a capture of the optional copies it whole.
            let authenticated = cookie != nil
            let body =
                if let credential {
                    Self.successBody(
                        authenticated: authenticated,
                        accessToken: credential.accessToken,
                        expiresIn: credential.expiresIn,
                        refreshToken: credential.refreshToken,
                        scope: credential.scope
                    )
                } else {
                    Self.successBodyWithoutCredential(authenticated: authenticated)
                }
            let headers = cookie.map {
                Self.jsonHeaders(adding: CollectionOfOne(HeaderField(name: "Set-Cookie", value: $0.headerValue)))
            }
            self.init(status: 200, headers: headers ?? Self.jsonHeaders, body: body)

        case .rotated(let rotation):
            // Read where the rotation holds them: no credential is made, and nothing is copied but bytes.
            let body = Self.successBody(
                authenticated: false,
                accessToken: rotation.minted.accessToken,
                expiresIn: rotation.accessTokenExpiresIn,
                refreshToken: rotation.minted.refreshToken,
                scope: rotation.attempt.scope
            )
            self.init(status: 200, headers: Self.jsonHeaders, body: body)

        case .redeemed(let redemption):
            let minted = redemption.minted
            let body =
                if let accessToken = minted.accessToken, let refreshToken = minted.refreshToken {
                    Self.successBody(
                        authenticated: true,
                        accessToken: accessToken,
                        expiresIn: redemption.plan.accessTokenExpiresIn,
                        refreshToken: refreshToken,
                        scope: redemption.plan.scope
                    )
                } else {
                    Self.successBodyWithoutCredential(authenticated: true)
                }
            let cookie = HeaderField(name: "Set-Cookie", value: redemption.cookie.headerValue)
            self.init(status: 200, headers: Self.jsonHeaders(adding: CollectionOfOne(cookie)), body: body)

        case .refused(let error):
            let added = error.headerFields
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
            self.init(
                status: error.status,
                headers: added.isEmpty ? Self.jsonHeaders : Self.jsonHeaders(adding: added),
                body: body
            )
        }
    }

    /// `{"data":{"authenticated":…,"credential":{…}}}` (the endpoint's success shape; RFC 6749 §5.1 for
    /// the credential's members).
    private static func successBody(
        authenticated: Bool,
        accessToken: OpaqueToken,
        expiresIn: Int,
        refreshToken: OpaqueToken,
        scope: Scope
    ) -> [UInt8] {
        // Names, punctuation, `true`/`false` and `expires_in`'s at most 20 digits: under 160 bytes.
        let capacity = 160 + 2 * (SecretKind.encodedLength + 2) + JSONWriter.escapedCapacity(scope.rawValue)
        return JSONWriter.document(capacity: capacity) { json in
            json.raw("{\"data\":{")
            json.name("authenticated")
            json.bool(authenticated)
            json.raw(",")
            json.name("credential")
            // `token_type` is always `Bearer` (RFC 6750), written as the literal it is.
            json.raw("{\"token_type\":\"Bearer\"")
            json.member("access_token", token: accessToken)
            json.raw(",")
            json.name("expires_in")
            json.integer(expiresIn)
            json.member("refresh_token", token: refreshToken)
            json.member("scope", scope: scope)
            json.raw("}}}")
        }
    }

    /// `{"data":{"authenticated":…}}`: a success without a native credential.
    private static func successBodyWithoutCredential(authenticated: Bool) -> [UInt8] {
        JSONWriter.document(capacity: 160) { json in
            json.raw("{\"data\":{")
            json.name("authenticated")
            json.bool(authenticated)
            json.raw("}}")
        }
    }

    /// The header fields every response of the endpoint carries: `Content-Type: application/json`,
    /// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1). One array for every response
    /// that adds nothing to them — a refresh without a session, most refusals — so that such a response
    /// allocates none of its own.
    static let jsonHeaders = HeaderFields(standardFields)

    private static let standardFields: [HeaderField] = {
        var fields: [HeaderField] = []
        fields.reserveCapacity(standardFieldCount)
        appendStandardFields(to: &fields)
        return fields
    }()

    private static let standardFieldCount = 3

    /// Appends the ``jsonHeaders`` fields, made from their literals: copied from a stored array, as they
    /// were, each of the six strings was retained for the new array and released with it.
    private static func appendStandardFields(to fields: inout [HeaderField]) {
        fields.append(HeaderField(name: "Content-Type", value: "application/json"))
        fields.append(HeaderField(name: "Cache-Control", value: "no-store"))
        fields.append(HeaderField(name: "Pragma", value: "no-cache"))
    }

    /// ``jsonHeaders`` followed by `added`, in one array of the right size.
    private static func jsonHeaders(adding added: some Collection<HeaderField>) -> HeaderFields {
        var fields: [HeaderField] = []
        fields.reserveCapacity(standardFieldCount + added.count)
        appendStandardFields(to: &fields)
        fields.append(contentsOf: added)
        return HeaderFields(fields)
    }
}
