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
        let addresses: [[UInt8]]
        do {
            addresses = try resolve()
        } catch {
            return requests.map { _ in .failure(error) }
        }
        var connections: [Connection] = requests.map { request in
            Connection(outgoing: serialize(request), addresses: addresses)
        }
        for index in connections.indices {
            connections[index].open()
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
                pollfd(fd: connection.isFinished ? -1 : connection.socket, events: connection.events, revents: 0)
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
                connections[index].progress(descriptors[index].revents)
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
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        head += "Host: \(bracketed):\(port)\r\n"
        for field in request.headers {
            head += "\(field.name): \(field.value)\r\n"
        }
        if !request.body.isEmpty || !["GET", "HEAD", "OPTIONS"].contains(request.method) {
            head += "Content-Length: \(request.body.count)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + request.body
    }

    /// The server's addresses, IPv4 or IPv6 socket addresses as bytes, in the resolver's order; a
    /// connection tries the next when one refuses. An IPv6 literal may come in brackets.
    private func resolve() throws(WireError) -> [[UInt8]] {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_socktype = streamSocket
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &found)
        guard status == 0, found != nil else {
            throw WireError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(found) }
        var addresses: [[UInt8]] = []
        var next = found
        while let entry = next {
            addresses.append(
                Array(UnsafeRawBufferPointer(start: entry.pointee.ai_addr, count: Int(entry.pointee.ai_addrlen)))
            )
            next = entry.pointee.ai_next
        }
        return addresses
    }
}

/// One request's connection, advanced by `poll` readiness.
private struct Connection {
    var socket: Int32 = -1
    let outgoing: [UInt8]
    let addresses: [[UInt8]]
    var addressIndex = 0
    var sent = 0
    var framing = ResponseFraming()
    var connected = false
    var result: Result<WireResponse, WireError>?

    init(outgoing: [UInt8], addresses: [[UInt8]]) {
        self.outgoing = outgoing
        self.addresses = addresses
    }

    var isFinished: Bool { result != nil }

    /// What to wait for: the connect, then writing — and reading too, since a server may answer (a 413,
    /// say) before it has read the whole body — then reading.
    var events: Int16 {
        !connected ? Int16(POLLOUT) : sent < outgoing.count ? Int16(POLLOUT | POLLIN) : Int16(POLLIN)
    }

    func timeoutMessage(after seconds: Double) -> String {
        let phase =
            !connected
            ? "connecting" : sent < outgoing.count ? "sending the request" : "waiting for the response"
        let count = framing.receivedCount
        let received = count == 0 ? "nothing received" : "\(count) bytes received"
        return "timed out after \(String(format: "%g", seconds)) s \(phase) (\(received))"
    }

    /// Opens a socket and starts connecting to the current address.
    mutating func open() {
        if socket >= 0 {
            closeSocket(socket)
            socket = -1
        }
        let address = addresses[addressIndex]
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
            connectFailed(errno)
        }
    }

    /// Tries the next address, or fails when there is none.
    private mutating func connectFailed(_ error: Int32) {
        if addressIndex + 1 < addresses.count {
            addressIndex += 1
            open()
        } else {
            fail("cannot connect: \(String(cString: strerror(error)))")
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

    /// Does what the socket is ready for: finish connecting, read (an answer may come before the
    /// request is all sent), or write.
    mutating func progress(_ ready: Int16) {
        if !connected {
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                connectFailed(error)
                return
            }
            connected = true
            return
        }
        if ready & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            read()
        } else if sent < outgoing.count {
            write()
        }
    }

    private mutating func write() {
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
    }

    private mutating func read() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            record(framing.receive(buffer[..<count]))
        } else if count == 0 {
            record(framing.finish())
            fail(
                framing.receivedCount == 0
                    ? "the server closed the connection without answering" : "the response ended early"
            )
        } else if errno != EAGAIN && errno != EINTR {
            let error = errno
            if error == ECONNRESET && framing.receivedCount > 0 {
                record(framing.finish())
            }
            fail("cannot read the response: \(String(cString: strerror(error)))")
        }
    }

    private mutating func record(_ outcome: ResponseFraming.Outcome) {
        switch outcome {
        case .incomplete: break
        case .complete(let response): result = .success(response)
        case .malformed(let reason): fail("malformed response: \(reason)")
        }
    }
}

/// Splits HTTP/1.1 response bytes into status, fields and body as they arrive (RFC 9112 §4, §5, §6.3,
/// §7.1): interim 1xx responses are skipped, and each byte is looked at a bounded number of times
/// however the response is cut into reads.
struct ResponseFraming {
    enum Outcome {
        case incomplete
        case complete(WireResponse)
        case malformed(String)
    }

    private enum Body {
        case length(Int)
        case chunked
        case untilClose
    }

    private var bytes: [UInt8] = []
    /// Where the current response's head starts (after any interim responses).
    private var headStart = 0
    /// How far the search for the end of the head has got.
    private var searched = 0
    private var head: (response: WireResponse, bodyStart: Int, body: Body)?
    /// The decoded chunks so far, and where the next chunk-size line starts.
    private var decoded: [UInt8] = []
    private var chunkCursor = 0

    init() {}

    /// How many bytes have arrived.
    var receivedCount: Int { bytes.count }

    /// Takes more bytes, and says whether the response is complete.
    mutating func receive(_ more: some Collection<UInt8>) -> Outcome {
        bytes += more
        if bytes.count > HTTPWire.maximumResponseBytes {
            return .malformed("the response is larger than \(HTTPWire.maximumResponseBytes) bytes")
        }
        return advance(atEnd: false)
    }

    /// The connection ended: the response is complete if it is framed by the end of the connection.
    mutating func finish() -> Outcome {
        advance(atEnd: true)
    }

    /// Parses `bytes` all at once; for tests.
    static func parse(_ bytes: [UInt8], atEnd: Bool) -> Outcome {
        var framing = ResponseFraming()
        let outcome = framing.receive(bytes)
        guard atEnd, case .incomplete = outcome else { return outcome }
        return framing.finish()
    }

    private mutating func advance(atEnd: Bool) -> Outcome {
        while head == nil {
            let separator: [UInt8] = [13, 10, 13, 10]
            let from = max(headStart, searched - 3)
            guard let end = bytes[from...].firstRange(of: separator) else {
                searched = bytes.count
                return atEnd ? .malformed("the header section never ends") : .incomplete
            }
            let parsed: WireResponse
            switch Self.parseHead(bytes[headStart..<end.lowerBound]) {
            case .success(let response): parsed = response
            case .failure(let error): return .malformed(error.description)
            }
            if (100..<200).contains(parsed.status) && parsed.status != 101 {
                // An interim response (RFC 9110 §15.2): the final one follows.
                headStart = end.upperBound
                searched = headStart
                continue
            }
            var body = Body.untilClose
            if parsed.status == 204 || parsed.status == 304 || parsed.status == 101 {
                body = .length(0)
            } else if parsed.values(of: "Transfer-Encoding").contains(where: { $0.lowercased().contains("chunked") }) {
                body = .chunked
            } else if let text = parsed.values(of: "Content-Length").first {
                guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                    let length = Int(text)
                else {
                    return .malformed("bad Content-Length \(text)")
                }
                body = .length(length)
            }
            head = (parsed, end.upperBound, body)
            chunkCursor = end.upperBound
        }
        guard let (response, bodyStart, body) = head else { return .incomplete }
        switch body {
        case .length(let length):
            let available = bytes.count - bodyStart
            guard available >= length else {
                return atEnd ? .malformed("the body ended after \(available) of \(length) bytes") : .incomplete
            }
            var complete = response
            complete.body = Array(bytes[bodyStart..<bodyStart + length])
            return .complete(complete)
        case .untilClose:
            guard atEnd else { return .incomplete }
            var complete = response
            complete.body = Array(bytes[bodyStart...])
            return .complete(complete)
        case .chunked:
            return dechunk(response, atEnd: atEnd)
        }
    }

    /// Decodes every complete chunk after `chunkCursor`; complete at the last chunk.
    private mutating func dechunk(_ response: WireResponse, atEnd: Bool) -> Outcome {
        while true {
            guard let lineEnd = bytes[chunkCursor...].firstRange(of: [13, 10]) else {
                return atEnd ? .malformed("a chunk never ends") : .incomplete
            }
            let sizeField = bytes[chunkCursor..<lineEnd.lowerBound].prefix { $0 != UInt8(ascii: ";") }
            let digits = String(decoding: sizeField, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.count <= 8, digits.allSatisfy(\.isHexDigit),
                let size = Int(digits, radix: 16)
            else {
                return .malformed("bad chunk size \(digits.prefix(20))")
            }
            if size == 0 {
                var complete = response
                complete.body = decoded
                return .complete(complete)
            }
            guard size <= HTTPWire.maximumResponseBytes else {
                return .malformed("a chunk of \(size) bytes is larger than the response may be")
            }
            let dataStart = lineEnd.upperBound
            guard bytes.count >= dataStart + size + 2 else {
                return atEnd ? .malformed("a chunk ended early") : .incomplete
            }
            decoded += bytes[dataStart..<dataStart + size]
            chunkCursor = dataStart + size + 2
        }
    }

    /// The status line and fields of a head. Field values are read as ISO-8859-1, as RFC 9110 §5.5
    /// allows for bytes beyond ASCII.
    private static func parseHead(_ head: ArraySlice<UInt8>) -> Result<WireResponse, WireError> {
        let text = String(head.map { Character(Unicode.Scalar($0)) })
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), statusLine[1].count == 3,
            statusLine[1].allSatisfy(\.isASCII), statusLine[1].allSatisfy(\.isNumber),
            let status = Int(statusLine[1]), (100...599).contains(status)
        else {
            return .failure(WireError("bad status line"))
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                return .failure(WireError("a field line without a colon"))
            }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            )
        }
        return .success(WireResponse(status: status, headers: headers, body: []))
    }
}
