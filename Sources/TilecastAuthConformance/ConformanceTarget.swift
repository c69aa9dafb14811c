// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// What the scenarios run against: TilecastAuth's engine in process (``InProcessTarget``) or any server
/// over HTTP that implements the control API (``HTTPTarget``).
public protocol ConformanceTarget: Sendable {
    /// What the target supports; scenarios needing more are reported as not applicable.
    func capabilities() async throws(TargetError) -> TargetCapabilities
    /// Starts a fresh world with the configuration overrides applied.
    func reset(overrides: [String: ScenarioJSON]) async throws(TargetError) -> TargetReset
    /// Sends requests to the endpoint, all at once when there are several, and returns their responses
    /// in order.
    func send(_ calls: [EndpointCall]) async -> [Result<WireResponse, WireError>]
    /// Performs a control operation and returns its result document.
    func perform(
        _ operation: ConformanceOperation,
        _ parameters: [String: ScenarioJSON]
    ) async throws(TargetError) -> ScenarioJSON
}

/// What a target supports of the control API.
public struct TargetCapabilities: Sendable, Equatable {
    /// The operations it implements, `reset` included.
    public var operations: Set<String>
    /// The configuration members its `reset` applies.
    public var configuration: Set<String>
    /// The backend operations its `failNext` can fail.
    public var failNext: Set<String>
    /// Whether it takes a request's peer address from ``ConformanceControl/peerField``.
    public var peer: Bool

    public init(operations: Set<String>, configuration: Set<String>, failNext: Set<String>, peer: Bool) {
        self.operations = operations
        self.configuration = configuration
        self.failNext = failNext
        self.peer = peer
    }

    /// Reads the document the `capabilities` operation returns.
    public init(document: ScenarioJSON) throws(TargetError) {
        guard let object = document.objectValue, let operations = object["operations"]?.arrayValue else {
            throw TargetError(
                "the capabilities document has no operations array: \(String(describing: document).prefix(300))"
            )
        }
        guard object["version"]?.numberValue == Double(ConformanceControl.version) else {
            throw TargetError(
                "the target speaks control API version \(object["version"].map(String.init(describing:)) ?? "none"); this runner speaks \(ConformanceControl.version)"
            )
        }
        guard operations.contains(.string("reset")) else {
            throw TargetError("the target's capabilities do not list reset, without which no scenario can run")
        }
        self.operations = Set(operations.compactMap(\.stringValue))
        configuration = Set((object["configuration"]?.arrayValue ?? []).compactMap(\.stringValue))
        failNext = Set((object["failNext"]?.arrayValue ?? []).compactMap(\.stringValue))
        peer = object["peer"]?.boolValue ?? false
    }

    /// Everything: what ``ConformanceControl`` implements.
    public static let complete = try! TargetCapabilities(document: ConformanceControl.capabilities)

    /// What `scenario` needs of a target: `reset` and the operations of its steps, `inspect` for
    /// `storeUnchanged` and `secretsProtected`, the backend operations it makes fail, the configuration
    /// members it sets, and the peer field when a request gives its peer.
    public static func required(by scenario: Scenario) -> TargetCapabilities {
        var needs = TargetCapabilities(
            operations: ["reset"],
            configuration: Set(scenario.configurationOverrides.keys),
            failNext: [],
            peer: false
        )
        for step in scenario.steps {
            if let operation = step.action.kind.operation {
                needs.operations.insert(operation.rawValue)
            }
            if step.action.kind == .failNext, let name = step.action.parameters["operation"]?.stringValue {
                needs.failNext.insert(name)
            }
            if step.expectation["storeUnchanged"] != nil || step.expectation["secretsProtected"] != nil {
                needs.operations.insert(ConformanceOperation.inspect.rawValue)
            }
            let requests =
                step.action.kind == .concurrent
                ? ["request", "exchange", "refresh"].compactMap { step.action.parameters[$0]?.objectValue }
                : step.action.kind.isRequest ? [step.action.parameters] : []
            if requests.contains(where: { $0["peer"] != nil }) {
                needs.peer = true
            }
        }
        return needs
    }

    /// Why `scenario` cannot run on a target with these capabilities, or `nil` when it can.
    public func reasonNotApplicable(to scenario: Scenario) -> String? {
        let needs = Self.required(by: scenario)
        var reasons: [String] = []
        let missing = needs.operations.subtracting(operations).sorted()
        if !missing.isEmpty {
            reasons.append(
                "needs the control operation\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", "))"
            )
        }
        let unfailable = needs.failNext.subtracting(failNext).sorted()
        if !unfailable.isEmpty {
            reasons.append("needs failNext of \(unfailable.joined(separator: ", "))")
        }
        let members = needs.configuration.subtracting(configuration).sorted()
        if !members.isEmpty {
            reasons.append(
                "needs the configuration member\(members.count == 1 ? "" : "s") \(members.joined(separator: ", "))"
            )
        }
        if needs.peer && !peer {
            reasons.append("needs requests from a given peer address (\(ConformanceControl.peerField))")
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }
}

/// One request to the endpoint and the peer address it comes from.
public struct EndpointCall: Sendable {
    /// The request; its `target` is ignored in process.
    public var request: WireRequest
    /// The trusted peer address, or `nil` for a request without one.
    public var peer: String?

    public init(request: WireRequest, peer: String?) {
        self.request = request
        self.peer = peer
    }
}

/// What a target's `reset` came to.
public enum TargetReset: Sendable, Equatable {
    case ready
    /// The configuration was refused, with the target's reason.
    case configurationRefused(String)
    /// The target does not support the configuration, with its reason: the scenario is not applicable.
    case unsupported(String)
}

/// A target that did not do what was asked.
public struct TargetError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// Whether the target said it does not support what was asked (a 501): the scenario is then not
    /// applicable rather than failed.
    public let unsupported: Bool

    public init(_ description: String, unsupported: Bool = false) {
        self.description = description
        self.unsupported = unsupported
    }
}

/// TilecastAuth's own engine, in process, on the in-memory store.
public struct InProcessTarget: ConformanceTarget {
    private let control: ConformanceControl

    public init() async throws {
        // Seeded: a run in process mints the same secrets every time, so its reports can be compared.
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        control = try await ConformanceControl(
            token: bytes.map { String(format: "%02x", $0) }.joined(),
            randomSource: { SeededRandomSource(seed: 0xC0FFEE) },
            makeStore: { clients in InMemoryGrantStore(clients: clients) }
        )
    }

    public func capabilities() async throws(TargetError) -> TargetCapabilities {
        .complete
    }

    public func reset(overrides: [String: ScenarioJSON]) async throws(TargetError) -> TargetReset {
        do {
            switch try await control.reset(overrides: overrides) {
            case .ready: return .ready
            case .configurationRefused(let message): return .configurationRefused(message)
            case .storeFailed(let message): throw TargetError("the store could not be made: \(message)")
            }
        } catch let error as ScenarioFormatError {
            throw TargetError("reset: \(error)")
        } catch let error as TargetError {
            throw error
        } catch {
            throw TargetError("reset: \(error)")
        }
    }

    public func send(_ calls: [EndpointCall]) async -> [Result<WireResponse, WireError>] {
        let engine = control.engine
        return await withTaskGroup(of: (Int, WireResponse).self) { group in
            for (index, call) in calls.enumerated() {
                group.addTask {
                    var headers = HeaderFields()
                    for field in call.request.headers {
                        headers.append(name: field.name, value: field.value)
                    }
                    let response = await engine.handle(
                        request: EndpointRequest(
                            method: call.request.method,
                            headers: headers,
                            body: call.request.body,
                            peerAddress: call.peer
                        )
                    )
                    let fields = response.headers.fields.map { (name: $0.name, value: $0.value) }
                    return (index, WireResponse(status: response.status, headers: fields, body: response.body))
                }
            }
            var responses = [Result<WireResponse, WireError>](
                repeating: .failure(WireError("no response")),
                count: calls.count
            )
            for await (index, response) in group {
                responses[index] = .success(response)
            }
            return responses
        }
    }

    public func perform(
        _ operation: ConformanceOperation,
        _ parameters: [String: ScenarioJSON]
    ) async throws(TargetError) -> ScenarioJSON {
        do {
            return try await control.world.perform(operation, parameters)
        } catch {
            throw TargetError("\(operation.rawValue): \(error)")
        }
    }
}
