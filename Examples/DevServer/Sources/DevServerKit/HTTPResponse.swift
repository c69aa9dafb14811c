// SPDX-License-Identifier: Apache-2.0

/// A response to send: status, header fields in order, body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// An HTML page. Pages are never cached: they show sessions and grants as they are now.
    static func html(_ status: Int = 200, _ page: String, headers: [(name: String, value: String)] = []) -> HTTPResponse
    {
        HTTPResponse(
            status: status,
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"),
                ("X-Frame-Options", "DENY"),
            ] + headers,
            body: Array(page.utf8)
        )
    }

    /// A JSON body the caller has already encoded.
    static func json(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + headers,
            body: Array(body.utf8)
        )
    }

    /// A redirect: 302 for the authorization response (RFC 6749 §4.1.2), 303 after a form post.
    static func redirect(
        to location: String,
        status: Int = 302,
        headers: [(name: String, value: String)] = []
    )
        -> HTTPResponse
    {
        HTTPResponse(status: status, headers: [("Location", location), ("Cache-Control", "no-store")] + headers)
    }
}
