// SPDX-License-Identifier: Apache-2.0

import CMicroHTTPD
import Dispatch
import Foundation
import Glibc

/// An HTTP server on GNU libmicrohttpd: one thread per connection, each request read whole and handed
/// to an async handler, whose response is sent when it returns.
///
/// libmicrohttpd calls back on its own threads; the handler runs on Swift concurrency's, and the
/// connection's thread waits for it — a connection thread blocking is what the thread-per-connection
/// model is for.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    /// The largest body read; a larger one is answered 413 without being read further.
    static let maximumBodyBytes = 1 << 20

    private let handler: Handler
    private let lock = NSLock()
    private var daemon: OpaquePointer?

    public init(handler: @escaping Handler) {
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// Starts listening on `host` (an IPv4 address) and `port` (0 for an ephemeral one) and returns the
    /// port. With `tls`, PEM key and certificate, it serves HTTPS only.
    public func start(host: String, port: UInt16, tls: (key: String, certificate: String)? = nil) throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError("not an IPv4 address: \(host)")
        }
        if tls != nil && tilecast_mhd_supports_tls() == 0 {
            throw HTTPServerError("this libmicrohttpd was built without TLS")
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &address) { pointer in
            tilecast_mhd_start(
                pointer,
                accessHandler,
                context,
                completionHandler,
                context,
                tls?.key,
                tls?.certificate,
                30,
                256
            )
        }
        guard let started else { throw HTTPServerError("libmicrohttpd could not listen on \(host):\(port)") }
        lock.withLock { daemon = started }
        return tilecast_mhd_port(started)
    }

    /// A TCP port on `host` that nothing listens on now: the kernel's choice for port 0. Another process
    /// could take it before the server binds it; for a dev server started by tests, that risk is fine.
    static func freePort(on host: String) throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw HTTPServerError("not an IPv4 address: \(host)")
        }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        guard socket >= 0, found else { throw HTTPServerError("no free port on \(host)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Stops accepting, finishes the requests under way and closes every connection.
    public func stop() {
        let running = lock.withLock { () -> OpaquePointer? in
            defer { daemon = nil }
            return daemon
        }
        if let running {
            MHD_stop_daemon(running)
        }
    }

    // MARK: Callbacks

    /// One call of libmicrohttpd's access handler: the first creates the request's state, those with
    /// upload data append to its body, and the last — no more data — answers.
    fileprivate func access(
        _ connection: OpaquePointer,
        url: String,
        method: String,
        uploadData: UnsafePointer<CChar>?,
        uploadDataSize: UnsafeMutablePointer<Int>,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let stored = requestContext.pointee else {
            // The first call: the header is complete, the body not yet read. A request whose length is
            // ambiguous is answered now, before libmicrohttpd reads a body it would frame one way while a
            // proxy in front might have framed it another (request smuggling, RFC 9112 §6.1, §6.3).
            if let problem = MessageFraming.problem(in: Self.values(of: connection, kind: .HEADER_KIND)) {
                let body = #"{"error":"invalid_request","error_description":"\#(problem)"}"#
                return send(.json(400, body, headers: [("Connection", "close")]), on: connection)
            }
            requestContext.pointee = Unmanaged.passRetained(RequestState()).toOpaque()
            return MHD_Result.YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
        if uploadDataSize.pointee > 0 {
            if let uploadData, state.body.count + uploadDataSize.pointee <= Self.maximumBodyBytes {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadDataSize.pointee) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadDataSize.pointee))
                }
            } else {
                state.tooLarge = true
            }
            uploadDataSize.pointee = 0
            return MHD_Result.YES
        }
        let response: HTTPResponse
        if state.tooLarge {
            response = .json(413, #"{"error":"invalid_request","error_description":"The body is too large."}"#)
        } else {
            response = respond(to: request(connection, url: url, method: method, body: state.body))
        }
        return send(response, on: connection)
    }

    private func request(_ connection: OpaquePointer, url: String, method: String, body: [UInt8]) -> HTTPRequest {
        var address = [CChar](repeating: 0, count: 64)
        var peer: String?
        if tilecast_mhd_client_address(connection, &address, socklen_t(address.count)) == 1 {
            let text = address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            peer = String(decoding: text, as: UTF8.self)
        }
        return HTTPRequest(
            method: method,
            path: url,
            query: Self.values(of: connection, kind: .GET_ARGUMENT_KIND),
            headers: Self.values(of: connection, kind: .HEADER_KIND),
            body: body,
            peerAddress: peer
        )
    }

    /// Runs the async handler and waits for its answer on this connection's thread.
    private func respond(to request: HTTPRequest) -> HTTPResponse {
        let done = DispatchSemaphore(value: 0)
        let box = ResponseBox()
        let handler = self.handler
        Task {
            box.response = await handler(request)
            done.signal()
        }
        done.wait()
        return box.response ?? HTTPResponse(status: 500)
    }

    private func send(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        // MHD_RESPMEM_MUST_COPY: libmicrohttpd copies the body, so it may go when this returns.
        let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!
        var body = response.body
        let created = body.withUnsafeMutableBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, bytes.baseAddress, mustCopy)
        }
        guard let created else { return MHD_Result.NO }
        defer { MHD_destroy_response(created) }
        for (name, value) in response.headers {
            _ = MHD_add_response_header(created, name, value)
        }
        return MHD_queue_response(connection, UInt32(response.status), created)
    }

    fileprivate static func finish(_ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let requestContext, let stored = requestContext.pointee else { return }
        Unmanaged<RequestState>.fromOpaque(stored).release()
        requestContext.pointee = nil
    }

    private static func values(of connection: OpaquePointer, kind: MHD_ValueKind) -> [(name: String, value: String)] {
        let collected = ValueList()
        let context = Unmanaged.passUnretained(collected).toOpaque()
        _ = MHD_get_connection_values(connection, kind, valueIterator, context)
        return collected.values
    }
}

/// What one request has sent so far.
private final class RequestState {
    var body: [UInt8] = []
    var tooLarge = false
}

/// The handler's answer, handed from the Swift task to the waiting connection thread; the semaphore
/// orders the write before the read.
private final class ResponseBox: @unchecked Sendable {
    var response: HTTPResponse?
}

/// Header fields or query arguments, collected by ``valueIterator``.
private final class ValueList {
    var values: [(name: String, value: String)] = []
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context,
    connection,
    url,
    method,
    _,
    uploadData,
    uploadDataSize,
    requestContext in
    guard let context, let connection, let url, let method, let uploadDataSize, let requestContext else {
        return MHD_Result.NO
    }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.access(
        connection,
        url: String(cString: url),
        method: String(cString: method),
        uploadData: uploadData,
        uploadDataSize: uploadDataSize,
        requestContext: requestContext
    )
}

private let completionHandler: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
    HTTPServer.finish(requestContext)
}

private let valueIterator: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return MHD_Result.YES }
    let list = Unmanaged<ValueList>.fromOpaque(context).takeUnretainedValue()
    list.values.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return MHD_Result.YES
}
