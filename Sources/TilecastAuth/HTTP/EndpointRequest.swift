// SPDX-License-Identifier: Apache-2.0

/// An HTTP request to `POST /api/v1/oauth/ios-session`, as any server has it in hand.
///
/// The embedding server maps its own request type into this one — the method, the header fields, the
/// body bytes and the peer address — and TilecastAuth does the rest: it never reads a socket and takes
/// no dependency on a server framework.
public struct EndpointRequest: Sendable {
    /// The request method, exactly as received (RFC 9110 §9.1: methods are case-sensitive).
    public var method: String
    /// The header fields as received, repeated fields kept separate.
    public var headers: HeaderFields
    /// The complete request body.
    public var body: [UInt8]
    /// The address of the peer the server trusts as the client: the socket's remote address, or the
    /// address the server's own reverse proxy vouches for. Used as the rate-limit key.
    ///
    /// - Important: Never pass a client-supplied `X-Forwarded-For` value through unchecked
    ///   (RFC 9700 §4.13): a client could then pick its own rate-limit bucket.
    public var peerAddress: String?

    public init(method: String, headers: HeaderFields, body: [UInt8], peerAddress: String?) {
        self.method = method
        self.headers = headers
        self.body = body
        self.peerAddress = peerAddress
    }
}

extension EndpointRequest: CustomStringConvertible, CustomReflectable {
    /// The method, the header fields with secret-bearing values masked, and the body's size — never the
    /// body, which carries codes, verifiers and refresh tokens.
    public var description: String {
        "EndpointRequest(\(method), headers: \(headers), body: \(body.count) bytes, peer: \(peerAddress ?? "unknown"))"
    }

    /// A mirror without the body, so `dump` cannot print a secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method, "headers": headers, "bodyCount": body.count, "peerAddress": peerAddress as Any,
            ],
            displayStyle: .struct
        )
    }
}
