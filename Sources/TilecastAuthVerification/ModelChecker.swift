// SPDX-License-Identifier: Apache-2.0

import Foundation
public import TilecastAuth
import TilecastAuthTesting

/// Runs operation sequences against the engine and the reference model side by side, and checks after
/// every step that they agree and that the invariants hold:
///
/// - every request's status, error code, `authenticated` flag and cookie presence is what the model says;
/// - a code yields at most one credential;
/// - every session cookie and access token authenticates exactly when the model says — so after a
///   revocation or a sign-out none of the grant's does;
/// - a grant has at most one live Studio session;
/// - a refused request leaves the store exactly as it was, except the documented revocation when a used
///   code or a rotated refresh token comes back;
/// - the store never holds a raw secret.
///
/// With ``Deployment/remembering(instances:)``, the operations go to the instances in turn and the
/// concurrent ones are spread over them, each instance remembering what it wrote (`GrantStore`'s
/// "Remembered records"): the model, which knows nothing of instances, is the oracle that a stale
/// remembered record changes no answer.
public struct ModelChecker: Sendable {
    /// The engines under test and the stores they see.
    public enum Deployment: Sendable, CustomStringConvertible {
        /// One engine, on an in-memory store that remembers nothing.
        case single
        /// `instances` engines on one in-memory store, each behind its own `RememberingStore`.
        case remembering(instances: Int)
        /// One engine per store `make` returns for the clients it is given — stores on the same records,
        /// which may remember what they wrote (PostgreSQL instances on one schema, say) — each behind a
        /// fault-injecting store of its own. `name` says what they are.
        case stores(_ name: String, make: @Sendable (_ clients: [Client]) async throws -> ModelStores)

        public var description: String {
            switch self {
            case .single: "one instance reading every record"
            case .remembering(let instances): "\(instances) remembering instance\(instances == 1 ? "" : "s")"
            case .stores(let name, _): name
            }
        }
    }

    /// The reuse leeway of the configuration under test, in seconds; 0 is strict rotation.
    public let leeway: Double
    /// The engines under test.
    public let deployment: Deployment

    public init(leeway: Double = 0, deployment: Deployment = .single) {
        self.leeway = leeway
        self.deployment = deployment
    }

    /// Runs `sequence` from scratch; returns the first violation, or `nil`.
    public func run(_ sequence: [ModelOperation]) async -> ModelViolation? {
        await runCounting(sequence).violation
    }

    /// Runs `sequence` from scratch; returns the first violation, if any, and what the run exercised.
    public func runCounting(
        _ sequence: [ModelOperation]
    ) async -> (violation: ModelViolation?, statistics: ModelStatistics) {
        let run: ModelRun
        do {
            run = try await ModelRun(leeway: leeway, deployment: deployment)
        } catch {
            let violation = ModelViolation(
                step: 0,
                operation: sequence.first ?? .removeExpired,
                message: "setup failed: \(error)"
            )
            return (violation, ModelStatistics())
        }
        var finished = run
        let violation = await Self.check(sequence, in: &finished)
        let remembered = finished.world.rememberedRecords
        finished.statistics.rememberedRecordsUsed = remembered.used
        finished.statistics.rememberedRecordsFoundStale = remembered.foundStale
        await finished.world.close()
        return (violation, finished.statistics)
    }

    /// Performs `sequence` step by step in `run`, checking after each; the first violation, or `nil`.
    private static func check(_ sequence: [ModelOperation], in run: inout ModelRun) async -> ModelViolation? {
        for (step, operation) in sequence.enumerated() {
            run.instance = run.failureHolder ?? step
            run.statistics.operations += 1
            if let message = await run.perform(operation) {
                return ModelViolation(step: step, operation: operation, message: message)
            }
            run.releaseFailureHolder()
            if let message = await run.checkInvariants() {
                return ModelViolation(step: step, operation: operation, message: message)
            }
        }
        if let message = await run.checkNoRawSecrets() {
            return ModelViolation(
                step: sequence.count - 1,
                operation: sequence.last ?? .removeExpired,
                message: message
            )
        }
        return nil
    }

    /// The shortest sequence found, by removing ever smaller runs of operations, that still fails.
    public func shrink(_ sequence: [ModelOperation], attempts: Int = 400) async -> [ModelOperation] {
        var best = sequence
        var budget = attempts
        var chunk = max(1, best.count / 2)
        while chunk >= 1 && budget > 0 {
            var start = 0
            var improved = false
            while start < best.count && budget > 0 {
                var candidate = best
                candidate.removeSubrange(start..<min(best.count, start + chunk))
                budget -= 1
                if !candidate.isEmpty, await run(candidate) != nil {
                    best = candidate
                    improved = true
                } else {
                    start += chunk
                }
            }
            if !improved {
                chunk /= 2
            }
        }
        return best
    }
}
