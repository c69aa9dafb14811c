// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

extension ScenarioRun {
    /// A step's result document, and what a failure report shows of how it came about.
    struct Performed {
        var result: ScenarioJSON
        /// For endpoint requests: the request sent and the response received, as HTTP.
        var transcript: [String] = []
    }

    /// Performs one action on the target and returns its result document.
    func perform(_ kind: ScenarioAction.Kind, _ parameters: [String: ScenarioJSON]) async throws -> Performed {
        let reader = ScenarioReader(parameters, path: kind.rawValue)
        switch kind {
        case .request, .exchange, .refresh:
            let call = try endpointCall(kind, reader)
            let response = await target.send([call])[0]
            let transcript = Self.transcript(of: call, response, on: target)
            switch response {
            case .success(let response):
                return Performed(result: document(for: response), transcript: transcript)
            case .failure(let error):
                throw StepFailure("no response: \(error)\n" + transcript.joined(separator: "\n"))
            }
        case .concurrent:
            return Performed(result: try await concurrent(reader))
        default:
            guard let operation = kind.operation else {
                throw ScenarioFormatError(path: kind.rawValue, message: "is not an action")
            }
            let result = try await target.perform(operation, parameters)
            if operation == .serveClient, result.value(at: "error") == nil,
                let client = parameters["client"]?.stringValue, let callback = parameters["callbackUri"]?.stringValue
            {
                servedClient = client
                callbackURI = callback
            }
            for path in ["code", "verifier", "accessToken", "refreshToken", "sessionId"] {
                if let secret = result.value(at: path)?.stringValue, !secret.isEmpty {
                    secrets.append(secret)
                }
            }
            return Performed(result: result)
        }
    }

    /// The endpoint request an action describes: the method, the fields (a JSON `Content-Type` unless the
    /// step gives fields of its own), the body and the peer.
    func endpointCall(_ kind: ScenarioAction.Kind, _ reader: ScenarioReader) throws(ScenarioFormatError) -> EndpointCall
    {
        var body: [UInt8] = []
        switch kind {
        case .request:
            if let text = try reader.string("body") {
                body = Array(text.utf8)
            } else if let encoded = try reader.string("bodyBase64") {
                guard let bytes = Data(base64Encoded: encoded) else {
                    throw ScenarioFormatError(path: "request.bodyBase64", message: "is not base64")
                }
                body = Array(bytes)
            } else if let json = reader.members["json"] {
                body = Array(json.description.utf8)
            }
        case .exchange, .refresh:
            var members: [String: ScenarioJSON] = [
                "client_id": .string(try reader.string("clientId") ?? servedClient)
            ]
            if kind == .exchange {
                members["grant_type"] = .string("authorization_code")
                members["code"] = reader.members["code"] ?? .null
                members["code_verifier"] = reader.members["verifier"] ?? .null
                members["redirect_uri"] = .string(try reader.string("redirectUri") ?? callbackURI)
            } else {
                members["grant_type"] = .string("refresh_token")
                members["refresh_token"] = reader.members["refreshToken"] ?? .null
                if let studioSession = reader.members["studioSession"] {
                    members["studio_session"] = studioSession
                }
            }
            for (key, value) in try reader.object("extra") ?? [:] {
                members[key] = value
            }
            for key in try reader.strings("omit") ?? [] {
                members[key] = nil
            }
            body = Array(ScenarioJSON.object(members).description.utf8)
        default:
            throw ScenarioFormatError(path: kind.rawValue, message: "is not a request")
        }
        var headers: [(name: String, value: String)] = []
        if let given = try reader.object("headers") {
            for (name, value) in given.sorted(by: { $0.key < $1.key }) {
                for item in value.arrayValue ?? [value] {
                    headers.append((name, item.text))
                }
            }
        } else {
            headers.append(("Content-Type", "application/json"))
        }
        let peer = reader.members["peer"] == nil ? Self.defaultPeer : try reader.string("peer")
        return EndpointCall(
            request: WireRequest(
                method: try reader.string("method") ?? "POST",
                target: HTTPTarget.endpointPath,
                headers: headers,
                body: body
            ),
            peer: peer
        )
    }

    /// The result document of an endpoint response: `status`, `headers` (lowercased names), `body` (the
    /// JSON, or null), `cookie` (the first `Set-Cookie` parsed, or null) and `setCookieCount`. Records
    /// the secrets it carries.
    func document(for response: WireResponse) -> ScenarioJSON {
        var headers: [String: ScenarioJSON] = [:]
        for field in response.headers {
            let name = field.name.lowercased()
            if let existing = headers[name] {
                headers[name] = .array((existing.arrayValue ?? [existing]) + [.string(field.value)])
            } else {
                headers[name] = .string(field.value)
            }
        }
        let body = ScenarioJSON(data: Data(response.body)) ?? .null
        for path in ["data.credential.access_token", "data.credential.refresh_token"] {
            if let secret = body.value(at: path)?.stringValue {
                secrets.append(secret)
            }
        }
        let setCookies = response.values(of: "Set-Cookie")
        var cookie = ScenarioJSON.null
        if let first = setCookies.first {
            cookie = SetCookieField.parse(first)
            if let value = cookie.value(at: "value")?.stringValue, !value.isEmpty {
                secrets.append(value)
            }
        }
        return .object([
            "status": .number(Double(response.status)),
            "headers": .object(headers),
            "body": body,
            "cookie": cookie,
            "setCookieCount": .number(Double(setCookies.count)),
        ])
    }

    private func concurrent(_ reader: ScenarioReader) async throws -> ScenarioJSON {
        let count = Int(try reader.number("count") ?? 0)
        guard count > 0 && count <= 1000 else {
            throw ScenarioFormatError(path: "concurrent.count", message: "must be 1 to 1000")
        }
        guard
            let innerKind = [ScenarioAction.Kind.request, .exchange, .refresh].first(where: {
                reader.members[$0.rawValue] != nil
            }),
            let inner = try reader.object(innerKind.rawValue)
        else {
            throw ScenarioFormatError(path: "concurrent", message: "needs one of request, exchange, refresh")
        }
        let call = try endpointCall(innerKind, ScenarioReader(inner, path: "concurrent.\(innerKind.rawValue)"))
        let responses = await target.send(Array(repeating: call, count: count))
        var statuses: [String: ScenarioJSON] = [:]
        for response in responses {
            let key: String
            switch response {
            case .success(let response):
                _ = document(for: response)  // records the secrets it carries
                key = String(response.status)
            case .failure(let error):
                key = "no response: \(error)"
            }
            statuses[key] = .number((statuses[key]?.numberValue ?? 0) + 1)
        }
        return .object(["statuses": .object(statuses), "count": .number(Double(count))])
    }

    /// The request as sent and the response as received, as HTTP/1.1 text, bodies cut at 600 bytes.
    static func transcript(
        of call: EndpointCall,
        _ response: Result<WireResponse, WireError>,
        on target: any ConformanceTarget
    ) -> [String] {
        var lines = ["  sent:"]
        if let http = target as? HTTPTarget {
            lines += HTTPText.render(http.describe(call)).map { "    \($0)" }
        } else {
            var head = "\(call.request.method) \(call.request.target) (in process, peer \(call.peer ?? "none"))\r\n"
            for field in call.request.headers {
                head += "\(field.name): \(field.value)\r\n"
            }
            lines += HTTPText.render(Array((head + "\r\n").utf8) + call.request.body).map { "    \($0)" }
        }
        switch response {
        case .success(let response):
            lines.append("  received:")
            var text = "HTTP/1.1 \(response.status)\r\n"
            for field in response.headers {
                text += "\(field.name): \(field.value)\r\n"
            }
            lines += HTTPText.render(Array((text + "\r\n").utf8) + response.body).map { "    \($0)" }
        case .failure(let error):
            lines.append("  received nothing: \(error)")
        }
        return lines
    }
}

/// A step that could not be carried out.
struct StepFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// HTTP messages as lines a person can read in a report.
enum HTTPText {
    /// The lines of a message: the head as is, the body as text (bytes that are not UTF-8 as `\xNN`),
    /// cut after 600 bytes.
    static func render(_ bytes: [UInt8]) -> [String] {
        let separator: [UInt8] = [13, 10, 13, 10]
        let headEnd = bytes.firstRange(of: separator)
        let head = String(decoding: bytes[..<(headEnd?.lowerBound ?? bytes.endIndex)], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        guard let headEnd else { return lines }
        let body = bytes[headEnd.upperBound...]
        if !body.isEmpty {
            var text = ""
            for byte in body.prefix(600) {
                if byte >= 0x20 && byte < 0x7F {
                    text.unicodeScalars.append(Unicode.Scalar(byte))
                } else if let scalar = String(validating: [byte], as: UTF8.self), byte == 0x0A || byte == 0x09 {
                    text += scalar
                } else {
                    text += String(format: "\\x%02X", byte)
                }
            }
            lines.append("")
            lines += text.components(separatedBy: "\n")
            if body.count > 600 {
                lines.append("… (\(body.count) bytes in all)")
            }
        }
        return lines
    }
}

/// A `Set-Cookie` field value, parsed as the scenarios read it (rfc6265bis §5.6).
enum SetCookieField {
    /// `{"name", "value", "attributes": {lowercased name: value, or true for a flag}}`.
    static func parse(_ header: String) -> ScenarioJSON {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let pair = parts[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        var attributes: [String: ScenarioJSON] = [:]
        for part in parts.dropFirst() where !part.isEmpty {
            let attribute = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            attributes[attribute[0].lowercased()] = attribute.count > 1 ? .string(String(attribute[1])) : .bool(true)
        }
        return .object([
            "name": .string(String(pair[0])),
            "value": .string(pair.count > 1 ? String(pair[1]) : ""),
            "attributes": .object(attributes),
        ])
    }
}
