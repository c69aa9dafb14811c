// SPDX-License-Identifier: Apache-2.0

import Foundation

#if canImport(Glibc)
import Glibc

private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let nonBlocking = Int32(SOCK_NONBLOCK.rawValue)
private let noSignal = Int32(MSG_NOSIGNAL)
private func closeSocket(_ socket: Int32) { _ = Glibc.close(socket) }
private func openSocket(_ family: Int32) -> Int32 { Glibc.socket(family, streamSocket | nonBlocking, 0) }
private func sendBytes(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    Glibc.send(socket, bytes.baseAddress, bytes.count, noSignal)
}
#elseif canImport(Darwin)
import Darwin

private let streamSocket = SOCK_STREAM
private func closeSocket(_ socket: Int32) { _ = Darwin.close(socket) }
private func openSocket(_ family: Int32) -> Int32 {
    let socket = Darwin.socket(family, streamSocket, 0)
    if socket >= 0 {
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    return socket
}
private func sendBytes(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    Darwin.send(socket, bytes.baseAddress, bytes.count, 0)
}
#endif

/// One HTTP/1.1 request exactly as the runner puts it on the wire: no field is added, folded or
/// reordered except the ones ``HTTPWire`` documents (`Host`, `Content-Length`, `Connection: close`).
public struct WireRequest: Sendable, Equatable {
    public var method: String
    /// The request target: the path and query.
    public var target: String
    /// The fields in order; a name may repeat.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: WireRequest, rhs: WireRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.body == rhs.body
            && lhs.headers.elementsEqual(rhs.headers, by: { $0.name == $1.name && $0.value == $1.value })
    }
}

/// One HTTP response as it came off the wire (or from the engine, in process).
public struct WireResponse: Sendable {
    public var status: Int
    /// The fields in order; a name may repeat.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The values of every field named `name`, compared case-insensitively (RFC 9110 §5.1).
    public func values(of name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }
}

/// Why a request got no response.
public struct WireError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A small HTTP/1.1 client over plain TCP that sends requests byte for byte as given, all at once when
/// there are several, and never waits past its deadline.
///
/// It exists because the runner must send what a scenario says — repeated fields, any method, bodies
/// that are not UTF-8 — and Foundation's `URLSession` adds, merges and drops fields. Each request gets a
/// connection of its own (`Connection: close`), so a batch is truly concurrent at the server. Responses
/// are framed by `Content-Length`, `Transfer-Encoding: chunked` or the end of the connection
/// (RFC 9112 §6.3).
public struct HTTPWire: Sendable {
    /// The server: a host name or address and a port.
    public let host: String
    public let port: UInt16
    /// How long a batch may take, from the first connect to the last byte.
    public let timeout: Duration

    public init(host: String, port: UInt16, timeout: Duration) {
        self.host = host
        self.port = port
        self.timeout = timeout
    }

    /// The largest response accepted; a server that sends more is reported, not buffered without end.
    static let maximumResponseBytes = 4 << 20

    /// Sends every request, each on its own connection, all at once, and returns their responses in
    /// order. A request that cannot be sent, or whose response is malformed or not complete by the
    /// deadline, gets a ``WireError``. Runs on a thread of its own, so a batch never blocks Swift
    /// concurrency's threads.
    public func send(_ requests: [WireRequest]) async -> [Result<WireResponse, WireError>] {
        let wire = self
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: wire.sendBlocking(requests))
            }
        }
    }

    /// ``send(_:)`` on the calling thread.
    func sendBlocking(_ requests: [WireRequest]) -> [Result<WireResponse, WireError>] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let address: [UInt8]
        do {
            address = try resolve()
        } catch {
            return requests.map { _ in .failure(error) }
        }
        var connections: [Connection] = requests.map { request in
            Connection(outgoing: serialize(request))
        }
        for index in connections.indices {
            connections[index].open(address)
        }
        while connections.contains(where: { !$0.isFinished }) {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero {
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                for index in connections.indices where !connections[index].isFinished {
                    connections[index].fail(connections[index].timeoutMessage(after: seconds))
                }
                break
            }
            var descriptors = connections.map { connection in
                pollfd(
                    fd: connection.isFinished ? -1 : connection.socket,
                    events: Int16(connection.wantsToWrite ? POLLOUT : POLLIN),
                    revents: 0
                )
            }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + 1)
            let ready = poll(&descriptors, nfds_t(descriptors.count), min(milliseconds, 1000))
            if ready < 0 && errno != EINTR {
                let message = String(cString: strerror(errno))
                for index in connections.indices where !connections[index].isFinished {
                    connections[index].fail("poll failed: \(message)")
                }
                break
            }
            for index in connections.indices where descriptors[index].revents != 0 {
                connections[index].progress()
            }
        }
        return connections.map { connection in
            connection.close()
            return connection.result ?? .failure(WireError("no response"))
        }
    }

    /// The request's bytes: the request line, the given fields, then `Host`, `Content-Length` (when the
    /// request has a body or is not a GET, HEAD or OPTIONS without one) and `Connection: close`.
    func serialize(_ request: WireRequest) -> [UInt8] {
        var head = "\(request.method) \(request.target) HTTP/1.1\r\n"
        head += "Host: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
        for field in request.headers {
            head += "\(field.name): \(field.value)\r\n"
        }
        if !request.body.isEmpty || !["GET", "HEAD", "OPTIONS"].contains(request.method) {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + request.body
    }

    /// The server's address: an IPv4 or IPv6 socket address, as bytes.
    private func resolve() throws(WireError) -> [UInt8] {
        var hints = addrinfo()
        hints.ai_socktype = streamSocket
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw WireError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(found) }
        return Array(UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
    }
}

/// One request's connection, advanced by `poll` readiness.
private struct Connection {
    var socket: Int32 = -1
    var outgoing: [UInt8]
    var sent = 0
    var incoming: [UInt8] = []
    var connected = false
    var result: Result<WireResponse, WireError>?

    init(outgoing: [UInt8]) {
        self.outgoing = outgoing
    }

    var isFinished: Bool { result != nil }
    var wantsToWrite: Bool { !connected || sent < outgoing.count }

    func timeoutMessage(after seconds: Double) -> String {
        let phase =
            !connected
            ? "connecting" : sent < outgoing.count ? "sending the request" : "waiting for the response"
        let received = incoming.isEmpty ? "nothing received" : "\(incoming.count) bytes received"
        return "timed out after \(String(format: "%g", seconds)) s \(phase) (\(received))"
    }

    mutating func open(_ address: [UInt8]) {
        let family = address.withUnsafeBytes { $0.load(fromByteOffset: 0, as: sa_family_t.self) }
        socket = openSocket(Int32(family))
        guard socket >= 0 else {
            fail("cannot open a socket: \(String(cString: strerror(errno)))")
            return
        }
        var one: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let status = address.withUnsafeBytes { bytes in
            connect(socket, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
        if status != 0 && errno != EINPROGRESS {
            fail("cannot connect: \(String(cString: strerror(errno)))")
        }
    }

    mutating func fail(_ message: String) {
        if result == nil {
            result = .failure(WireError(message))
        }
    }

    func close() {
        if socket >= 0 {
            closeSocket(socket)
        }
    }

    /// Does whatever the socket is ready for: finish connecting, write, or read and try to frame.
    mutating func progress() {
        if !connected {
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                fail("cannot connect: \(String(cString: strerror(error)))")
                return
            }
            connected = true
        }
        if sent < outgoing.count {
            let written = outgoing[sent...].withUnsafeBytes { sendBytes(socket, $0) }
            if written > 0 {
                sent += written
            } else if written < 0 && errno != EAGAIN && errno != EINTR {
                // The server may answer and close before reading the whole body (a 413, say): read it.
                if errno == EPIPE || errno == ECONNRESET {
                    sent = outgoing.count
                } else {
                    fail("cannot send: \(String(cString: strerror(errno)))")
                }
            }
            return
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            incoming += buffer[..<count]
            if incoming.count > HTTPWire.maximumResponseBytes {
                fail("the response is larger than \(HTTPWire.maximumResponseBytes) bytes")
                return
            }
            frame(atEnd: false)
        } else if count == 0 {
            frame(atEnd: true)
            fail(incoming.isEmpty ? "the server closed the connection without answering" : "the response ended early")
        } else if errno != EAGAIN && errno != EINTR {
            if errno == ECONNRESET && !incoming.isEmpty {
                frame(atEnd: true)
            }
            fail("cannot read the response: \(String(cString: strerror(errno)))")
        }
    }

    /// Sets `result` once `incoming` holds a whole response.
    mutating func frame(atEnd: Bool) {
        switch ResponseFraming.parse(incoming, atEnd: atEnd) {
        case .incomplete: break
        case .complete(let response): result = .success(response)
        case .malformed(let reason): fail("malformed response: \(reason)")
        }
    }
}

/// Splits HTTP/1.1 response bytes into status, fields and body (RFC 9112 §4, §5, §6.3, §7.1).
enum ResponseFraming {
    enum Outcome {
        case incomplete
        case complete(WireResponse)
        case malformed(String)
    }

    static func parse(_ bytes: [UInt8], atEnd: Bool) -> Outcome {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = bytes.firstRange(of: separator) else {
            return atEnd ? .malformed("the header section never ends") : .incomplete
        }
        guard let head = String(validating: bytes[..<headEnd.lowerBound], as: UTF8.self) else {
            return .malformed("the header section is not UTF-8")
        }
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]),
            (100...599).contains(status)
        else {
            return .malformed("bad status line")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return .malformed("a field line without a colon") }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            )
        }
        let response = WireResponse(status: status, headers: headers, body: [])
        let body = Array(bytes[headEnd.upperBound...])
        if status == 204 || status == 304 || (100..<200).contains(status) {
            return .complete(response)
        }
        if response.values(of: "Transfer-Encoding").contains(where: { $0.lowercased().contains("chunked") }) {
            return dechunk(body, atEnd: atEnd, response: response)
        }
        if let lengthText = response.values(of: "Content-Length").first {
            guard let length = Int(lengthText), length >= 0 else { return .malformed("bad Content-Length") }
            if body.count >= length {
                var complete = response
                complete.body = Array(body.prefix(length))
                return .complete(complete)
            }
            return atEnd ? .malformed("the body ended after \(body.count) of \(length) bytes") : .incomplete
        }
        guard atEnd else { return .incomplete }
        var complete = response
        complete.body = body
        return .complete(complete)
    }

    private static func dechunk(_ body: [UInt8], atEnd: Bool, response: WireResponse) -> Outcome {
        var decoded: [UInt8] = []
        var index = body.startIndex
        while true {
            guard let lineEnd = body[index...].firstRange(of: [13, 10]) else {
                return atEnd ? .malformed("a chunk never ends") : .incomplete
            }
            let sizeText =
                String(decoding: body[index..<lineEnd.lowerBound], as: UTF8.self)
                .split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                return .malformed("bad chunk size")
            }
            let dataStart = lineEnd.upperBound
            if size == 0 {
                var complete = response
                complete.body = decoded
                return .complete(complete)
            }
            guard body.count >= dataStart + size + 2 else {
                return atEnd ? .malformed("a chunk ended early") : .incomplete
            }
            decoded += body[dataStart..<dataStart + size]
            index = dataStart + size + 2
        }
    }
}
