// SPDX-License-Identifier: Apache-2.0

/// A request as libmicrohttpd delivered it: the path without its query, the query's arguments already
/// percent-decoded, the header fields in order, the whole body.
public struct HTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [(name: String, value: String)]
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The client's IP address as text, from the socket.
    public var peerAddress: String?

    public init(
        method: String,
        path: String,
        query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        peerAddress: String? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peerAddress = peerAddress
    }

    /// The first value of header `name`, compared without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
