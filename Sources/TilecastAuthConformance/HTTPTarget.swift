// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A running server, over HTTP: endpoint requests go to `<base>/api/v1/oauth/ios-session`, control
/// operations to `<base>/conformance/v1/<operation>` with the server's control token.
public struct HTTPTarget: ConformanceTarget {
    /// The endpoint's path under the base URL, as the API document gives it.
    public static let endpointPath = "/api/v1/oauth/ios-session"

    private let wire: HTTPWire
    private let basePath: String
    private let token: String
    private let knownCapabilities: TargetCapabilities?

    /// A target at `baseURL` (`http://host:port`, optionally with a path prefix) whose control API takes
    /// `token`; every request must be answered within `timeout`.
    public init(baseURL: String, token: String, timeout: Duration) throws(TargetError) {
        guard let components = URLComponents(string: baseURL), let host = components.host, !host.isEmpty else {
            throw TargetError("\(baseURL) is not a URL such as http://127.0.0.1:8080")
        }
        guard components.scheme == "http" else {
            throw TargetError("\(baseURL): only http:// targets are supported (run the server on loopback)")
        }
        guard components.query == nil, components.fragment == nil else {
            throw TargetError("\(baseURL): the base URL takes no query or fragment")
        }
        guard let port = UInt16(exactly: components.port ?? 80), port > 0 else {
            throw TargetError("\(baseURL): the port must be 1 to 65535")
        }
        wire = HTTPWire(host: host, port: port, timeout: timeout)
        let path = components.percentEncodedPath
        basePath = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.token = token
        knownCapabilities = nil
    }

    private init(_ target: HTTPTarget, capabilities: TargetCapabilities) {
        wire = target.wire
        basePath = target.basePath
        token = target.token
        knownCapabilities = capabilities
    }

    /// This target, with its capabilities read once: requests then carry the peer field only if the
    /// server takes it.
    public func connected() async throws(TargetError) -> HTTPTarget {
        HTTPTarget(self, capabilities: try await capabilities())
    }

    public func capabilities() async throws(TargetError) -> TargetCapabilities {
        if let knownCapabilities {
            return knownCapabilities
        }
        let document: ScenarioJSON
        do {
            document = try await control("capabilities", method: "GET", body: nil)
        } catch {
            throw TargetError("\(error)")
        }
        return try TargetCapabilities(document: document)
    }

    public func reset(overrides: [String: ScenarioJSON]) async throws(TargetError) -> TargetReset {
        do {
            _ = try await control("reset", body: .object(["configuration": .object(overrides)]))
            return .ready
        } catch let error as ControlFailure {
            switch (error.status, error.code) {
            case (422, "configurationRefused"): return .configurationRefused(error.message)
            case (501, _): return .unsupported(error.message)
            default: throw TargetError(error.description)
            }
        } catch let error as TargetError {
            throw error
        } catch {
            throw TargetError("\(error)")
        }
    }

    public func send(_ calls: [EndpointCall]) async -> [Result<WireResponse, WireError>] {
        let takesPeer = knownCapabilities?.peer ?? false
        let requests = calls.map { call in
            var request = call.request
            request.target = basePath + Self.endpointPath
            if takesPeer {
                request.headers.append((ConformanceControl.peerField, call.peer ?? "none"))
            }
            return request
        }
        return await wire.send(requests)
    }

    /// The request the wire would send for `call`, as text — what a failure report shows.
    public func describe(_ call: EndpointCall) -> [UInt8] {
        var request = call.request
        request.target = basePath + Self.endpointPath
        if knownCapabilities?.peer ?? false {
            request.headers.append((ConformanceControl.peerField, call.peer ?? "none"))
        }
        return wire.serialize(request)
    }

    public func perform(
        _ operation: ConformanceOperation,
        _ parameters: [String: ScenarioJSON]
    ) async throws(TargetError) -> ScenarioJSON {
        do {
            return try await control(operation.rawValue, body: .object(parameters))
        } catch let error as ControlFailure {
            throw TargetError(error.description, unsupported: error.status == 501)
        } catch let error as TargetError {
            throw error
        } catch {
            throw TargetError("\(error)")
        }
    }

    /// A control API answer other than 200.
    private struct ControlFailure: Error, CustomStringConvertible {
        let operation: String
        let status: Int
        let code: String
        let message: String
        var description: String { "control operation \(operation): \(status) \(code) \(message)" }
    }

    private func control(_ operation: String, method: String = "POST", body: ScenarioJSON?) async throws -> ScenarioJSON
    {
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)")]
        if body != nil {
            headers.append(("Content-Type", "application/json"))
        }
        let request = WireRequest(
            method: method,
            target: basePath + ConformanceControl.pathPrefix + operation,
            headers: headers,
            body: body.map { Array($0.description.utf8) } ?? []
        )
        let response: WireResponse
        switch await wire.send([request])[0] {
        case .success(let received): response = received
        case .failure(let error): throw TargetError("control operation \(operation): \(error)")
        }
        let document = ScenarioJSON(data: Data(response.body))
        guard response.status == 200 else {
            throw ControlFailure(
                operation: operation,
                status: response.status,
                code: document?.value(at: "error")?.stringValue ?? "",
                message: document?.value(at: "message")?.stringValue
                    ?? String(decoding: response.body.prefix(300), as: UTF8.self)
            )
        }
        guard let document, document.objectValue != nil else {
            throw TargetError("control operation \(operation): the answer is not a JSON object")
        }
        return document
    }
}
