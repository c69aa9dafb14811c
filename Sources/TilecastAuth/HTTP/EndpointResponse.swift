// SPDX-License-Identifier: Apache-2.0

/// The HTTP response to send back: a status code, header fields and body bytes.
///
/// The headers always include `Content-Type: application/json`, `Cache-Control: no-store` and
/// `Pragma: no-cache` (RFC 6749 §5.1), and at most one `Set-Cookie` (rfc6265bis §4.1.1).
public struct EndpointResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields, in the order to send them.
    public var headers: HeaderFields
    /// The JSON body.
    public var body: [UInt8]

    public init(status: Int, headers: HeaderFields, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension EndpointResponse: CustomStringConvertible, CustomReflectable {
    /// The status, the header fields with `Set-Cookie` masked, and the body's size — never the body,
    /// which may carry an access and a refresh token.
    public var description: String {
        "EndpointResponse(\(status), headers: \(headers), body: \(body.count) bytes)"
    }

    /// A mirror without the body, so `dump` cannot print a secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["status": status, "headers": headers, "bodyCount": body.count], displayStyle: .struct)
    }
}
