// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import DevServerKit

/// Requests whose length two HTTP parsers could read differently — the raw material of request smuggling
/// (RFC 9112 §6.1, §6.3) — sent byte for byte over a real socket. libmicrohttpd 0.9.75 accepts them; the
/// dev server answers 400 and closes the connection, so the request hidden in the body is never served.
struct MessageFramingTests {
    /// A body that hides a second request after the first's `0` chunk.
    static let smuggled = "0\r\n\r\nGET /studio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    @Test(
        "Ambiguous framing gets 400 and a closed connection; the hidden request is not served",
        arguments: [
            "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: chunked\r\nContent-Length: 48\r\n",
            "Content-Length: 48\r\nContent-Length: 5\r\n",
            "Content-Length: 48, 5\r\n",
            "Transfer-Encoding: gzip, chunked\r\n",
            "Transfer-Encoding: identity\r\nContent-Length: 48\r\n",
        ]
    )
    func ambiguousFramingIsRefused(framing: String) async throws {
        let client = try await DevServerClient()
        defer { Self.stop(client.server) }
        let port = try #require(Int(client.server.baseURL.split(separator: ":").last ?? ""))
        let request =
            "POST /api/v1/oauth/ios-session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + framing + "\r\n" + Self.smuggled
        let (reply, closed) = try RawConnection.exchange(port: port, request: request)
        #expect(reply.hasPrefix("HTTP/1.1 400"), "\(reply.prefix(200))")
        #expect(closed, "the connection stayed open")
        // Nothing but the refusal: the hidden GET /studio was never answered. (libmicrohttpd refuses a
        // comma-separated Content-Length itself, with a page of its own, and repeats its status line.)
        let statuses = reply.components(separatedBy: "HTTP/1.1 ").dropFirst()
        #expect(statuses.allSatisfy { $0.hasPrefix("400 ") }, "another response came: \(reply)")
        #expect(reply.contains("invalid_request") || reply.contains("Request malformed"))
    }

    @Test("Unambiguous framing — one Content-Length, or chunked alone — reaches the endpoint")
    func plainFramingPasses() async throws {
        let client = try await DevServerClient()
        defer { Self.stop(client.server) }
        let port = try #require(Int(client.server.baseURL.split(separator: ":").last ?? ""))
        for framing in ["Content-Length: 2\r\n\r\n{}", "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"] {
            let request =
                "POST /api/v1/oauth/ios-session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Connection: close\r\n" + framing
            let (reply, _) = try RawConnection.exchange(port: port, request: request)
            // The endpoint itself answers: the empty object lacks grant_type.
            #expect(reply.hasPrefix("HTTP/1.1 400"), "\(reply.prefix(200))")
            #expect(reply.contains("grant_type"), "\(reply)")
        }
    }

    /// Stops the server, waiting at most 10 seconds: a request the server is still reading — a body
    /// framed one way and sent another — would otherwise hold the test run until CI's limit.
    static func stop(_ server: DevServer) {
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.stop()
            stopped.signal()
        }
        if stopped.wait(timeout: .now() + 10) == .timedOut {
            Issue.record("the server did not stop within 10 s: a request is still being read")
        }
    }

    @Test("The framing rules, one by one")
    func rules() {
        #expect(MessageFraming.problem(in: [("Content-Length", "12")]) == nil)
        #expect(MessageFraming.problem(in: [("Transfer-Encoding", "Chunked")]) == nil)
        #expect(MessageFraming.problem(in: []) == nil)
        #expect(MessageFraming.problem(in: [("content-length", "12"), ("TRANSFER-ENCODING", "chunked")]) != nil)
        #expect(MessageFraming.problem(in: [("Content-Length", "12"), ("Content-Length", "12")]) != nil)
        #expect(MessageFraming.problem(in: [("Content-Length", "-1")]) != nil)
        #expect(MessageFraming.problem(in: [("Content-Length", "")]) != nil)
        #expect(MessageFraming.problem(in: [("Transfer-Encoding", "chunked, gzip")]) != nil)
    }
}
