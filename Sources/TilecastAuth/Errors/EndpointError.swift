// SPDX-License-Identifier: Apache-2.0

/// A refused request: its reason, and the status, OAuth error code, message and header fields the response
/// carries.
///
/// Every refusal maps to its whole response here, in one exhaustive `switch` with no `default` (compare
/// h11's `error_status_hint`): a new reason does not compile until it has a status, a code, a message and
/// its header fields. Equality is on the reason, so a test can write
/// `#expect(error == EndpointError(.codeVerifierMismatch))`.
public struct EndpointError: Error, Hashable, Sendable {
    /// Why the request was refused.
    public let reason: RefusalReason

    public init(_ reason: RefusalReason) {
        self.reason = reason
    }

    /// The HTTP status code.
    public var status: Int { response.status }

    /// The OAuth error code (RFC 6749 §5.2 where it applies).
    public var code: OAuthErrorCode { response.code }

    /// The `error_description` sent to the client. It never contains a secret or request content.
    public var message: String { response.message }

    /// The `Retry-After` seconds the response carries, if any (RFC 9110 §10.2.3).
    public var retryAfterSeconds: Int? { response.retryAfterSeconds }

    /// The header fields the refusal adds to the response's JSON headers: `Allow: POST` for a 405
    /// (RFC 9110 §15.5.6), `Retry-After` for a 429 and a contended refresh (RFC 6585 §4, RFC 9110 §10.2.3).
    public var headerFields: [HeaderField] {
        var fields: [HeaderField] = []
        if response.allowsPostOnly {
            fields.append(HeaderField(name: "Allow", value: "POST"))
        }
        if let seconds = response.retryAfterSeconds {
            fields.append(HeaderField(name: "Retry-After", value: String(seconds)))
        }
        return fields
    }

    /// Everything the response says about a refusal.
    private struct Response {
        var status: Int
        var code: OAuthErrorCode
        var message: String
        var retryAfterSeconds: Int? = nil
        var allowsPostOnly = false
    }

    /// The one mapping of a refusal to its response.
    private var response: Response {
        let invalidGrant =
            "The code or refresh token is invalid, expired, used, mismatched or revoked, or belongs to another client."
        switch reason.base {
        case .methodNotAllowed:
            return Response(
                status: 405,
                code: .invalidRequest,
                message: "The method must be POST.",
                allowsPostOnly: true
            )
        case .crossOriginRequest:
            return Response(status: 400, code: .invalidRequest, message: "Requests from this origin are not allowed.")
        case .unsupportedMediaType:
            return Response(
                status: 415,
                code: .invalidRequest,
                message: "The body must be JSON, sent with Content-Type: application/json."
            )
        case .bodyTooLarge(let limit):
            return Response(
                status: 413,
                code: .invalidRequest,
                message: "The body must not be larger than \(limit) bytes."
            )
        case .rateLimited(let seconds):
            return Response(
                status: 429,
                code: .slowDown,
                message: "Too many authentication attempts. Retry after the time in Retry-After.",
                retryAfterSeconds: max(1, seconds)
            )
        case .malformedBody(let detail):
            return Response(
                status: 400,
                code: .invalidRequest,
                message: "The body is not a well-formed JSON object: \(detail)."
            )
        case .duplicateMember:
            return Response(status: 400, code: .invalidRequest, message: "The body repeats a member name.")
        case .missingParameter(let name):
            return Response(status: 400, code: .invalidRequest, message: "The \(name) parameter is required.")
        case .invalidParameterType(let name):
            return Response(status: 400, code: .invalidRequest, message: "The \(name) parameter has the wrong type.")
        case .unsupportedGrantType:
            return Response(
                status: 400,
                code: .unsupportedGrantType,
                message: "The grant_type must be authorization_code or refresh_token."
            )
        case .unknownClient:
            return Response(
                status: 400,
                code: .invalidClient,
                message: "The client_id is not served by this endpoint."
            )
        case .malformedCodeVerifier:
            return Response(
                status: 400,
                code: .invalidRequest,
                message: "The code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~."
            )
        case .accountInactive:
            return Response(status: 403, code: .accessDenied, message: "The account is no longer active.")
        case .backendUnavailable:
            return Response(
                status: 503,
                code: .temporarilyUnavailable,
                message: "The service is temporarily unavailable. Nothing was changed; retry later."
            )
        case .refreshTokenContended:
            return Response(
                status: 503,
                code: .temporarilyUnavailable,
                message:
                    "Concurrent requests are rotating this refresh token. It is still valid; retry after Retry-After.",
                retryAfterSeconds: 1
            )
        case .redirectURIMismatch, .codeNotFound, .codeIssuedToAnotherClient, .codeWithoutS256Challenge,
            .codeVerifierMismatch, .codeExpired, .codeReplayed, .refreshTokenNotFound, .refreshTokenOfAnotherClient,
            .refreshTokenExpired, .refreshTokenReused, .grantRevoked:
            // One description for every unusable code or token: a caller holding someone else's learns
            // nothing about it.
            return Response(status: 400, code: .invalidGrant, message: invalidGrant)
        }
    }
}

extension EndpointError: CustomStringConvertible {
    public var description: String {
        "EndpointError(\(status) \(code): \(reason))"
    }
}
