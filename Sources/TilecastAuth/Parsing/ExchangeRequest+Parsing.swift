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
    ///
    /// Given the two settings it compares with, not the whole configuration: passing the configuration
    /// copied all 216 bytes of it on every request.
    static func parse(
        _ body: [UInt8],
        servedClient: ClientID,
        callbackURI: String
    ) throws(EndpointError) -> ExchangeRequest {
        var collected = RequestParameters()
        do throws(JSONParseError) {
            try JSONObjectParser.parse(body, known: RequestParameters.number(of:in:)) { _, number, value, _ in
                collected.take(number, value)
            }
        } catch {
            throw EndpointError(
                error.kind == .duplicateMember ? .duplicateMember : .malformedBody(detail: error.detail)
            )
        }
        // Read from a constant: each read of the variable the closure wrote to copied all 161 bytes of it
        // first (a call of `memmove`, five per exchange); this copies them once.
        let parameters = collected

        guard let grantType = try parameters.parsedGrantType else {
            throw EndpointError(.missingParameter(name: "grant_type"))
        }
        let (isCodeGrant, isRefreshGrant) = body.withUnsafeBytes {
            (grantType.equals("authorization_code", in: $0), grantType.equals("refresh_token", in: $0))
        }
        guard isCodeGrant || isRefreshGrant else {
            throw EndpointError(.unsupportedGrantType)
        }
        guard let clientID = try parameters.parsedClientID else {
            throw EndpointError(.missingParameter(name: "client_id"))
        }
        guard body.withUnsafeBytes({ clientID.equals(servedClient.rawValue, in: $0) }) else {
            throw EndpointError(.unknownClient)
        }

        if isCodeGrant {
            guard let code = try parameters.code(in: body) else { throw EndpointError(.missingParameter(name: "code")) }
            guard let redirectURI = try parameters.redirectURI(in: body) else {
                throw EndpointError(.missingParameter(name: "redirect_uri"))
            }
            guard let codeVerifier = try parameters.codeVerifier(in: body) else {
                throw EndpointError(.missingParameter(name: "code_verifier"))
            }
            guard PKCE.isWellFormedVerifier(codeVerifier) else { throw EndpointError(.malformedCodeVerifier) }
            guard redirectURI.equals(callbackURI) else {
                throw EndpointError(.redirectURIMismatch)
            }
            return .authorizationCode(
                AuthorizationCode(code: code, redirectURI: redirectURI, codeVerifier: codeVerifier)
            )
        } else {
            guard let refreshToken = try parameters.refreshToken(in: body) else {
                throw EndpointError(.missingParameter(name: "refresh_token"))
            }
            let studioSession = try parameters.studioSessionFlag ?? false
            return .refreshToken(RefreshToken(refreshToken: refreshToken, studioSession: studioSession))
        }
    }
}
