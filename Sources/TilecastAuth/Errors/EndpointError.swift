// SPDX-License-Identifier: Apache-2.0

/// A refused request: its reason, and the status, OAuth error code, message and `Retry-After` the response
/// carries.
///
/// Every refusal maps to exactly one status and code here, in one place (compare h11's
/// `error_status_hint`). Equality is on the reason, so a test can write
/// `#expect(error == EndpointError(.codeVerifierMismatch))`.
public struct EndpointError: Error, Hashable, Sendable {
    /// Why the request was refused.
    public let reason: RefusalReason

    public init(_ reason: RefusalReason) {
        self.reason = reason
    }

    /// The HTTP status code.
    public var status: Int {
        switch reason {
        case .methodNotAllowed: 405
        case .accountInactive: 403
        case .unsupportedMediaType: 415
        case .bodyTooLarge: 413
        case .rateLimited: 429
        case .backendUnavailable, .refreshTokenContended: 503
        case .crossOriginRequest, .malformedBody, .duplicateMember, .missingParameter, .invalidParameterType,
            .unsupportedGrantType, .unknownClient, .malformedCodeVerifier, .redirectURIMismatch, .codeNotFound,
            .codeIssuedToAnotherClient, .codeWithoutS256Challenge, .codeVerifierMismatch, .codeExpired,
            .codeReplayed, .refreshTokenNotFound, .refreshTokenOfAnotherClient, .refreshTokenExpired,
            .refreshTokenReused, .grantRevoked:
            400
        }
    }

    /// The OAuth error code (RFC 6749 §5.2 where it applies).
    public var code: OAuthErrorCode {
        switch reason {
        case .methodNotAllowed, .crossOriginRequest, .unsupportedMediaType, .bodyTooLarge, .malformedBody,
            .duplicateMember, .missingParameter, .invalidParameterType, .malformedCodeVerifier:
            .invalidRequest
        case .accountInactive: .accessDenied
        case .rateLimited: .slowDown
        case .backendUnavailable, .refreshTokenContended: .temporarilyUnavailable
        case .unsupportedGrantType: .unsupportedGrantType
        case .unknownClient: .invalidClient
        case .redirectURIMismatch, .codeNotFound, .codeIssuedToAnotherClient, .codeWithoutS256Challenge,
            .codeVerifierMismatch, .codeExpired, .codeReplayed, .refreshTokenNotFound, .refreshTokenOfAnotherClient,
            .refreshTokenExpired, .refreshTokenReused, .grantRevoked:
            .invalidGrant
        }
    }

    /// The `Retry-After` seconds the response carries, if any (RFC 9110 §10.2.3).
    public var retryAfterSeconds: Int? {
        switch reason {
        case .rateLimited(let seconds): max(1, seconds)
        case .refreshTokenContended: 1
        default: nil
        }
    }

    /// The `error_description` sent to the client. It never contains a secret or request content.
    public var message: String {
        switch reason {
        case .methodNotAllowed: "The method must be POST."
        case .crossOriginRequest: "Requests from this origin are not allowed."
        case .unsupportedMediaType: "The body must be JSON, sent with Content-Type: application/json."
        case .bodyTooLarge(let limit): "The body must not be larger than \(limit) bytes."
        case .rateLimited: "Too many authentication attempts. Retry after the time in Retry-After."
        case .malformedBody(let detail): "The body is not a well-formed JSON object: \(detail)."
        case .duplicateMember: "The body repeats a member name."
        case .missingParameter(let name): "The \(name) parameter is required."
        case .invalidParameterType(let name): "The \(name) parameter has the wrong type."
        case .unsupportedGrantType: "The grant_type must be authorization_code or refresh_token."
        case .unknownClient: "The client_id is not served by this endpoint."
        case .malformedCodeVerifier: "The code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~."
        case .accountInactive: "The account is no longer active."
        case .backendUnavailable: "The service is temporarily unavailable. Nothing was changed; retry later."
        case .refreshTokenContended:
            "Concurrent requests are rotating this refresh token. It is still valid; retry after Retry-After."
        case .redirectURIMismatch, .codeNotFound, .codeIssuedToAnotherClient, .codeWithoutS256Challenge,
            .codeVerifierMismatch, .codeExpired, .codeReplayed, .refreshTokenNotFound, .refreshTokenOfAnotherClient,
            .refreshTokenExpired, .refreshTokenReused, .grantRevoked:
            "The code or refresh token is invalid, expired, used, mismatched or revoked, or belongs to another client."
        }
    }
}

extension EndpointError: CustomStringConvertible {
    public var description: String {
        "EndpointError(\(status) \(code): \(reason))"
    }
}
