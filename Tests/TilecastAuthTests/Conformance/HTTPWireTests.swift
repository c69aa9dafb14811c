// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import TilecastAuthConformance

#if canImport(Glibc)
import Glibc
#endif

/// The runner's HTTP client: it frames responses as RFC 9112 says, and a server that hangs, closes or
/// cannot be reached gives a clear error within the deadline — the runner never hangs.
struct HTTPWireTests {
    @Test("Responses are framed by Content-Length, by chunks, and by the end of the connection")
    func framing() throws {
        let lengthFramed = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nX-A: 2\r\n\r\nhello".utf8)
        guard case .complete(let byLength) = ResponseFraming.parse(lengthFramed, atEnd: false) else {
            Issue.record("a Content-Length response was not complete")
            return
        }
        #expect(byLength.status == 200 && byLength.body == Array("hello".utf8))
        #expect(byLength.values(of: "x-a") == ["1", "2"])

        let chunked = Array(
            "HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n".utf8
        )
        guard case .complete(let byChunks) = ResponseFraming.parse(chunked, atEnd: false) else {
            Issue.record("a chunked response was not complete")
            return
        }
        #expect(byChunks.status == 400 && byChunks.body == Array("abcde".utf8))

        let unframed = Array("HTTP/1.1 200 OK\r\n\r\nuntil the end".utf8)
        guard case .incomplete = ResponseFraming.parse(unframed, atEnd: false) else {
            Issue.record("a response without framing was complete before the connection ended")
            return
        }
        guard case .complete(let byEnd) = ResponseFraming.parse(unframed, atEnd: true) else {
            Issue.record("a response framed by the end of the connection was not complete")
            return
        }
        #expect(byEnd.body == Array("until the end".utf8))

        let short = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8)
        guard case .malformed(let reason) = ResponseFraming.parse(short, atEnd: true) else {
            Issue.record("a body shorter than its Content-Length was accepted")
            return
        }
        #expect(reason.contains("3 of 10"))
        guard case .malformed = ResponseFraming.parse(Array("SMTP ready\r\n\r\n".utf8), atEnd: true) else {
            Issue.record("a response that is not HTTP was accepted")
            return
        }
    }

    @Test("Hostile framing is malformed, never a crash: huge or signed chunk sizes, signed lengths, bad statuses")
    func hostileFraming() {
        let hostile = [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nx",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nx",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nab",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nab",
            "HTTP/1.1 +200 OK\r\nContent-Length: 0\r\n\r\n",
        ]
        for text in hostile {
            guard case .malformed = ResponseFraming.parse(Array(text.utf8), atEnd: true) else {
                Issue.record("accepted: \(text.debugDescription)")
                continue
            }
        }
    }

    @Test("Interim 1xx responses are skipped; bytes beyond ASCII in a field are read, not refused")
    func interimResponses() {
        let text =
            "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        guard case .complete(let response) = ResponseFraming.parse(Array(text.utf8), atEnd: false) else {
            Issue.record("a response after interim ones was not complete")
            return
        }
        #expect(response.status == 200 && response.body == Array("ok".utf8))
        let latin = Array("HTTP/1.1 200 OK\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
        guard case .complete(let named) = ResponseFraming.parse(latin, atEnd: false) else {
            Issue.record("a field with an obs-text byte made the response malformed")
            return
        }
        #expect(named.values(of: "X-Name") == ["café"])
    }

    @Test("A response cut into one-byte reads is framed the same")
    func oneByteReads() {
        let text = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1\r\nd\r\n0\r\n\r\n".utf8)
        var framing = ResponseFraming()
        var outcome = ResponseFraming.Outcome.incomplete
        for byte in text {
            outcome = framing.receive([byte])
        }
        guard case .complete(let response) = outcome else {
            Issue.record("not complete after the last byte")
            return
        }
        #expect(response.body == Array("abcd".utf8))
    }

    @Test("Requests go out byte for byte: repeated fields kept, any method, Content-Length and Host added")
    func serialization() {
        let wire = HTTPWire(host: "127.0.0.1", port: 8080, timeout: .seconds(1))
        let bytes = wire.serialize(
            WireRequest(
                method: "post",
                target: "/api/v1/oauth/ios-session",
                headers: [("Content-Type", "application/json"), ("Content-Type", "text/plain")],
                body: [0xC0, 0xAF]
            )
        )
        let expected =
            "post /api/v1/oauth/ios-session HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
            + "Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
        #expect(bytes == Array(expected.utf8) + [0xC0, 0xAF])
    }

    @Test("A server that accepts the connection and never answers times out, with what was and was not received")
    func hangingServerTimesOut() async throws {
        let listener = try Listener()  // listens, never accepts: the kernel completes the handshake
        defer { listener.close() }
        let wire = HTTPWire(host: "127.0.0.1", port: listener.port, timeout: .milliseconds(300))
        let (results, elapsed) = await timedSend(
            wire,
            Array(repeating: WireRequest(method: "POST", target: "/", headers: [], body: []), count: 3)
        )
        #expect(elapsed < .seconds(3), "the deadline was 0.3 s; it took \(elapsed)")
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("a hanging server produced a response")
                continue
            }
            #expect(error.description == "timed out after 0.3 s waiting for the response (nothing received)")
        }
    }

    @Test("A port nobody listens on gives a clear error at once")
    func unreachableServer() async throws {
        let listener = try Listener()
        let port = listener.port
        listener.close()  // the port is now free, and nothing listens on it
        let wire = HTTPWire(host: "127.0.0.1", port: port, timeout: .seconds(5))
        let (results, elapsed) = await timedSend(
            wire,
            [WireRequest(method: "POST", target: "/", headers: [], body: [])]
        )
        let result = results[0]
        #expect(elapsed < .seconds(2))
        guard case .failure(let error) = result else {
            Issue.record("an unreachable server produced a response")
            return
        }
        #expect(error.description == "cannot connect: Connection refused")
    }

    @Test("The runner reports an unreachable target instead of running anything")
    func unreachableTarget() async throws {
        let listener = try Listener()
        let port = listener.port
        listener.close()
        let target = try HTTPTarget(baseURL: "http://127.0.0.1:\(port)", token: "t", timeout: .seconds(2))
        await #expect(throws: TargetError.self) { _ = try await ScenarioRunner(target: target) }
        #expect(throws: TargetError.self) {
            _ = try HTTPTarget(baseURL: "https://x.test", token: "t", timeout: .seconds(1))
        }
        #expect(throws: TargetError.self) { _ = try HTTPTarget(baseURL: "not a url", token: "t", timeout: .seconds(1)) }
    }
}

/// A loopback TCP socket that listens on an ephemeral port and never accepts.
private final class Listener: @unchecked Sendable {
    let socket: Int32
    let port: UInt16

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && listen(socket, 16) == 0
                    && getsockname(socket, generic, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() {
        _ = Glibc.close(socket)
    }
}

extension HTTPWireTests {
    /// Sends on a thread of its own, as ``HTTPWire/send(_:)`` does, and times the send there: what the
    /// wire's deadline bounds. Timed around `await send`, the figure also held the wait for a thread of
    /// Swift's pool to resume the test, which under ThreadSanitizer on a loaded CI machine took seconds
    /// (4.5 s for a 0.3 s deadline) and failed bounds the wire had kept.
    func timedSend(
        _ wire: HTTPWire,
        _ requests: [WireRequest]
    ) async -> (results: [Result<WireResponse, WireError>], elapsed: Duration) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let started = ContinuousClock.now
                let results = wire.sendBlocking(requests)
                continuation.resume(returning: (results, ContinuousClock.now - started))
            }
        }
    }
}
