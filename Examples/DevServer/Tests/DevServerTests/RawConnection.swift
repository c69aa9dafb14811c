// SPDX-License-Identifier: Apache-2.0

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection to the dev server that sends bytes exactly as given — what no HTTP client library
/// will do for a request whose framing is ambiguous — and reads everything until the server closes it or
/// a bounded wait runs out.
enum RawConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `request` to `127.0.0.1:port` and returns what came back, with whether the server closed the
    /// connection within `timeout`.
    static func exchange(port: Int, request: String, timeout: Int = 5) throws -> (reply: String, closed: Bool) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket failed: \(errno)") }
        defer { close(descriptor) }
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect failed: \(errno)") }
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "send failed: \(errno)") }
            sent += count
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                reply += buffer[0..<count]
            } else {
                // 0: the server closed the connection; -1: the wait ran out (or the connection reset).
                return (String(decoding: reply, as: UTF8.self), count == 0 || errno == ECONNRESET)
            }
        }
    }
}
