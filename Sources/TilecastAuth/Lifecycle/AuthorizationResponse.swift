// SPDX-License-Identifier: Apache-2.0

/// The redirect that ends the authorize step, built and encoded by the library: the callback URI with
/// `code` and `state` on success (RFC 6749 §4.1.2), or `error`, `error_description` and `state` on a
/// failure that may go back to the client (§4.1.2.1), and `iss` in both when the server has an issuer
/// identifier (RFC 9207 §2).
///
/// Every parameter value is percent-encoded — everything but RFC 3986's unreserved characters — so a
/// `state` holding `&`, `#`, `=` or a space reaches the app exactly as the app sent it, and no value can
/// add a parameter of its own. Parameters are added to the redirect URI's query, after any it already
/// has, and before nothing: a fragment, which a redirect URI must not have (RFC 6749 §3.1.2), is dropped.
public struct AuthorizationResponse: Hashable, Sendable {
    /// Where to send the user agent: the value of the `Location` field of a 302 or 303.
    public let location: String

    /// A successful authorization: `code`, then `state` if the client sent one, then `iss`.
    ///
    /// - Parameters:
    ///   - issued: The code ``AuthEngine/issueCode(account:client:redirectURI:codeChallenge:codeChallengeMethod:scope:authenticatedAt:)``
    ///     issued.
    ///   - redirectURI: The `redirect_uri` of the authorization request, as `issueCode` accepted it.
    ///   - state: The request's `state`, exactly as received; `nil` when it had none.
    ///   - issuer: The server's issuer identifier (RFC 8414 §2), or `nil` to send no `iss`.
    public static func success(
        _ issued: IssuedCode,
        redirectURI: String,
        state: String?,
        issuer: String?
    ) -> AuthorizationResponse {
        AuthorizationResponse(
            redirectURI: redirectURI,
            parameters: [("code", issued.code.unredactedValue), ("state", state), ("iss", issuer)]
        )
    }

    /// An error sent back to the client (RFC 6749 §4.1.2.1): `error`, `error_description` if given,
    /// `state` if the client sent one, then `iss`.
    ///
    /// Only for errors the authorize endpoint may redirect: never for an unknown client or a redirect URI
    /// the client did not register, which get an error page instead (see ``IssuanceError/mayRedirect``).
    ///
    /// - Parameters:
    ///   - error: The `error` code.
    ///   - description: Text for the developer; characters RFC 6749 §4.1.2.1 does not allow in an
    ///     `error_description` (outside `%x20-21 / %x23-5B / %x5D-7E`) are replaced by a space.
    ///   - redirectURI: The `redirect_uri` of the authorization request, once known to be registered.
    ///   - state: The request's `state`, exactly as received; `nil` when it had none.
    ///   - issuer: The server's issuer identifier, or `nil` to send no `iss`.
    public static func error(
        _ error: OAuthErrorCode,
        description: String? = nil,
        redirectURI: String,
        state: String?,
        issuer: String?
    ) -> AuthorizationResponse {
        let allowed = description.map { text in
            String(
                String.UnicodeScalarView(
                    text.unicodeScalars.map { scalar in
                        switch scalar.value {
                        case 0x20...0x21, 0x23...0x5B, 0x5D...0x7E: scalar
                        default: " "
                        }
                    }
                )
            )
        }
        return AuthorizationResponse(
            redirectURI: redirectURI,
            parameters: [
                ("error", error.description), ("error_description", allowed), ("state", state), ("iss", issuer),
            ]
        )
    }

    /// The error redirect for an ``IssuanceError``, with its ``IssuanceError/errorDescription`` as
    /// `error_description`, or `nil` when the error must not be redirected and the authorize endpoint
    /// shows an error page instead (``IssuanceError/mayRedirect``).
    public static func error(
        _ error: IssuanceError,
        redirectURI: String,
        state: String?,
        issuer: String?
    ) -> AuthorizationResponse? {
        guard error.mayRedirect else { return nil }
        return .error(
            error.oauthErrorCode,
            description: error.errorDescription,
            redirectURI: redirectURI,
            state: state,
            issuer: issuer
        )
    }

    private init(redirectURI: String, parameters: [(name: String, value: String?)]) {
        let base = redirectURI.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let query = parameters.compactMap { name, value in value.map { "\(name)=\(Self.percentEncoded($0))" } }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        location = base + separator + query.joined(separator: "&")
    }

    /// `text` with every byte but RFC 3986's unreserved characters percent-encoded (§2.1, §2.3).
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
