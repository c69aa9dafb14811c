// SPDX-License-Identifier: Apache-2.0

extension ExchangeRequest {
    /// Parses a JSON body into a request, or says why it is not one.
    ///
    /// The checks run in a fixed order so every body has one answer: the JSON itself; `grant_type`
    /// (absent → `invalid_request`, unknown → `unsupported_grant_type`); `client_id` (absent →
    /// `invalid_request`, another client → `invalid_client`); the grant type's own parameters, for
    /// presence and type; then their shape. Members of the other grant type and unknown members are
    /// ignored, whatever their type (RFC 6749 §3.2). A member that is `null` or `""` counts as absent
    /// (RFC 6749 §3.2: "Parameters sent without a value MUST be treated as if they were omitted").
    static func parse(_ body: [UInt8], configuration: EngineConfiguration) throws(EndpointError) -> ExchangeRequest {
        let parsed = body.withUnsafeBytes { bytes -> Result<[(name: String, value: JSONValue)], JSONParseError> in
            do throws(JSONParseError) {
                return .success(try JSONObjectParser.parse(bytes))
            } catch {
                return .failure(error)
            }
        }
        let members: [(name: String, value: JSONValue)]
        switch parsed {
        case .success(let parsedMembers):
            members = parsedMembers
        case .failure(let error):
            throw EndpointError(
                error.kind == .duplicateMember ? .duplicateMember : .malformedBody(detail: error.detail)
            )
        }
        let parameters = RequestParameters(members: members)

        guard let grantType = try parameters.string("grant_type") else {
            throw EndpointError(.missingParameter(name: "grant_type"))
        }
        let isCodeGrant = Self.bytesEqual(grantType, "authorization_code")
        guard isCodeGrant || Self.bytesEqual(grantType, "refresh_token") else {
            throw EndpointError(.unsupportedGrantType)
        }
        guard let clientID = try parameters.string("client_id") else {
            throw EndpointError(.missingParameter(name: "client_id"))
        }
        guard Self.bytesEqual(clientID, configuration.servedClient.rawValue) else {
            throw EndpointError(.unknownClient)
        }

        if isCodeGrant {
            guard let code = try parameters.string("code") else { throw EndpointError(.missingParameter(name: "code")) }
            guard let redirectURI = try parameters.string("redirect_uri") else {
                throw EndpointError(.missingParameter(name: "redirect_uri"))
            }
            guard let codeVerifier = try parameters.string("code_verifier") else {
                throw EndpointError(.missingParameter(name: "code_verifier"))
            }
            guard PKCE.isWellFormedVerifier(codeVerifier) else { throw EndpointError(.malformedCodeVerifier) }
            guard Self.bytesEqual(redirectURI, configuration.callbackURI) else {
                throw EndpointError(.redirectURIMismatch)
            }
            return .authorizationCode(
                AuthorizationCode(code: code, redirectURI: redirectURI, codeVerifier: codeVerifier)
            )
        } else {
            guard let refreshToken = try parameters.string("refresh_token") else {
                throw EndpointError(.missingParameter(name: "refresh_token"))
            }
            let studioSession = try parameters.bool("studio_session") ?? false
            return .refreshToken(RefreshToken(refreshToken: refreshToken, studioSession: studioSession))
        }
    }

    /// Byte-for-byte equality (RFC 3986 §6.2.1 simple string comparison). `String`'s `==` is not: it
    /// treats canonically equivalent strings as equal — U+212A KELVIN SIGN equals `K`.
    static func bytesEqual(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
    }
}
