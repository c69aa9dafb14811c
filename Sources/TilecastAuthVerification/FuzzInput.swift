// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// How fuzz bytes become a request.
///
/// An input of the form `METHOD\nName: value\n…\n\nbody` gives the method, the header fields and the body;
/// any other input is the body of a `POST` with `Content-Type: application/json`. Placeholders such as
/// `$CODE`, `$VERIFIER`, `$RT`, `$OLD_RT`, `$USED_CODE`, `$WEB_RT`, `$AT`, `$SESSION` and `$CALLBACK`
/// are replaced, in the headers and the body, by live values of the seeded world.
///
/// A first line starting with `#` sets options of the world instead: `L` a reuse leeway, `N` no native
/// credential, `F` a failing session start, `A` an inactive account, `T` the clock 61 seconds on.
enum FuzzInput {
    /// Splits off a leading `#options` line.
    static func options(of input: [UInt8]) -> (FuzzWorld.Options, [UInt8]) {
        guard input.first == UInt8(ascii: "#") else { return (FuzzWorld.Options(), input) }
        let end = input.firstIndex(of: 0x0A) ?? input.count
        var options = FuzzWorld.Options()
        for byte in input[1..<end] {
            switch byte {
            case UInt8(ascii: "L"): options.leeway = true
            case UInt8(ascii: "N"): options.withoutNativeCredential = true
            case UInt8(ascii: "F"): options.sessionStartFails = true
            case UInt8(ascii: "A"): options.accountInactive = true
            case UInt8(ascii: "T"): options.later = true
            default: break
            }
        }
        return (options, end < input.count ? Array(input[(end + 1)...]) : [])
    }

    static func request(body: String) -> EndpointRequest {
        EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json"],
            body: Array(body.utf8),
            peerAddress: "192.0.2.1"
        )
    }

    static func request(from input: [UInt8], placeholders: [(name: String, value: String)]) -> EndpointRequest {
        let substituted = substitute(input, placeholders)
        guard let (method, headers, body) = framed(substituted) else {
            return EndpointRequest(
                method: "POST",
                headers: ["Content-Type": "application/json"],
                body: substituted,
                peerAddress: "192.0.2.1"
            )
        }
        return EndpointRequest(method: method, headers: headers, body: body, peerAddress: "192.0.2.1")
    }

    /// Splits `METHOD\nheaders\n\nbody`; `nil` when the input does not start with an upper-case method line.
    private static func framed(_ bytes: [UInt8]) -> (String, HeaderFields, [UInt8])? {
        guard let firstBreak = bytes.firstIndex(of: 0x0A), firstBreak > 0, firstBreak <= 16,
            bytes[..<firstBreak].allSatisfy({ $0 >= 0x41 && $0 <= 0x5A })
        else { return nil }
        let method = String(decoding: bytes[..<firstBreak], as: UTF8.self)
        var headers = HeaderFields()
        var index = firstBreak + 1
        while index < bytes.count {
            let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[index..<end]
            index = end + 1
            if line.isEmpty { break }
            if let colon = line.firstIndex(of: 0x3A) {
                let name = String(decoding: line[..<colon], as: UTF8.self)
                let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingPrefix(" ")
                headers.append(name: name, value: String(value))
            }
        }
        return (method, headers, index < bytes.count ? Array(bytes[index...]) : [])
    }

    private static func substitute(_ bytes: [UInt8], _ placeholders: [(name: String, value: String)]) -> [UInt8] {
        guard bytes.contains(0x24) else { return bytes }  // "$"
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var index = 0
        outer: while index < bytes.count {
            if bytes[index] == 0x24 {
                for (name, value) in placeholders where bytes[index...].starts(with: name.utf8) {
                    output += value.utf8
                    index += name.utf8.count
                    continue outer
                }
            }
            output.append(bytes[index])
            index += 1
        }
        return output
    }
}
