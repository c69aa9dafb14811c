// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// One scenario being run on a target: the variables and secrets gathered along the way, and the last
/// exchange with the endpoint, which a failure report shows.
final class ScenarioRun {
    static let defaultPeer = "192.0.2.1"

    let scenario: Scenario
    let target: any ConformanceTarget
    var variables = ScenarioVariables()
    /// Every secret the run has seen: codes, verifiers, tokens, session ids.
    var secrets: [String] = []
    /// The client the endpoint serves and its callback — the defaults of `exchange` and `refresh` —
    /// from the configuration, then from the last `serveClient`.
    var servedClient: String
    var callbackURI: String

    init(_ scenario: Scenario, on target: any ConformanceTarget) {
        self.scenario = scenario
        self.target = target
        servedClient = scenario.configuration.engine.servedClient.rawValue
        callbackURI = scenario.configuration.engine.callbackURI
    }

    /// What running the steps came to.
    enum Outcome {
        case finished(failures: [String])
        case notApplicable(String)
    }

    /// Runs every step and returns how the target differed from the scenario. A step stops the run when
    /// its expectations fail: later steps build on it, and what they report would only repeat it.
    func execute() async -> Outcome {
        var failures: [String] = []
        for (index, step) in scenario.steps.enumerated() {
            let label = "step \(index + 1) (\(step.action.kind.rawValue))"
            do {
                let parameters = try variables.substitute(.object(step.action.parameters)).objectValue ?? [:]
                let expectation = try variables.substitute(.object(step.expectation)).objectValue ?? [:]
                let inspects = expectation["storeUnchanged"] != nil
                let before = inspects ? try await records() : []
                let performed = try await perform(step.action.kind, parameters)
                let storeChanged = inspects ? try await records() != before : false
                var mismatches = check(
                    expectation,
                    kind: step.action.kind,
                    result: performed.result,
                    storeChanged: storeChanged
                )
                if expectation["secretsProtected"]?.boolValue == true {
                    mismatches += try await checkSecretsProtected()
                }
                for capture in step.captures {
                    guard let value = performed.result.value(at: capture.path) else {
                        mismatches.append("capture \(capture.name): nothing at \(capture.path) in \(performed.result)")
                        continue
                    }
                    variables.set(capture.name, value)
                }
                if !mismatches.isEmpty {
                    failures += mismatches.map { "\(label): \($0)" }
                    failures += performed.transcript
                    break
                }
            } catch let error as TargetError where error.unsupported {
                // The target listed the operation in its capabilities: refusing it now is a failure, or a
                // server could turn any failing scenario into a not-applicable one.
                failures.append("\(label): \(error) — although the target's capabilities list it")
                break
            } catch {
                failures.append("\(label): \(error)")
                break
            }
        }
        let shortener = SecretShortener(extraSecrets: secrets)
        return .finished(failures: failures.map { shortener.shorten($0) })
    }

    /// What `inspect` shows: every record the target's store holds and every security event, each an
    /// array of strings. Anything else — an `{"error"}`, a missing member, a string — is an error: a check
    /// that cannot see the store must fail, never pass.
    private func inspection() async throws(TargetError) -> (records: [String], events: [String]) {
        let document = try await target.perform(.inspect, [:])
        func texts(_ member: String) throws(TargetError) -> [String] {
            guard let items = document.value(at: member)?.arrayValue else {
                throw TargetError(
                    "inspect: the answer has no \(member) array: \(String(describing: document).prefix(300))"
                )
            }
            var texts: [String] = []
            for item in items {
                guard let text = item.stringValue else {
                    throw TargetError("inspect: \(member) holds something other than strings")
                }
                texts.append(text)
            }
            return texts
        }
        return (try texts("records"), try texts("events"))
    }

    /// Every record the target's store holds, through `inspect`.
    private func records() async throws(TargetError) -> [String] {
        try await inspection().records
    }

    /// Fails if any secret the run has seen appears in the target's stored records or security events.
    private func checkSecretsProtected() async throws(TargetError) -> [String] {
        let inspection = try await inspection()
        let stored = inspection.records.joined(separator: "\n")
        let printed = inspection.events.joined(separator: "\n")
        var mismatches: [String] = []
        for secret in Set(secrets) {
            // The prefix is not secret; the random part is.
            let distinctive = SecretKindPrefix.strip(secret)
            if stored.contains(distinctive) {
                mismatches.append("secretsProtected: the store holds a raw secret (\(secret.prefix(10))…)")
            }
            if printed.contains(distinctive) {
                mismatches.append("secretsProtected: a security event shows a secret (\(secret.prefix(10))…)")
            }
        }
        if secrets.isEmpty {
            mismatches.append("secretsProtected: the scenario has not seen any secret yet")
        }
        return mismatches
    }
}

/// Strips a secret's kind prefix.
enum SecretKindPrefix {
    static func strip(_ secret: String) -> String {
        ["tcc_", "tca_", "tcr_", "tcs_"].contains { secret.hasPrefix($0) } ? String(secret.dropFirst(4)) : secret
    }
}
