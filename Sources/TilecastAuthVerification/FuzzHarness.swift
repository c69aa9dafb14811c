// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// One fuzz input through `handle(request:)`, and the properties every answer must have:
///
/// - no 5xx, except the 503 a session start failure (option `F`) causes in a code exchange;
/// - every response is JSON with `Cache-Control: no-store`;
/// - a refusal leaves the store exactly as it was, but for the single revocation a replayed code or a
///   reused refresh token demands.
///
/// Trapping, the other failure, is caught by the fuzzer itself.
public enum FuzzHarness: Sendable {
    /// The prepared world, made by the first run.
    private static let prepared = LockedValue<FuzzWorld?>(nil)

    /// What one input did.
    public struct Outcome: Sendable {
        /// The response's status, or 0 when the world could not be prepared.
        public let status: Int
        /// The property the answer broke, or `nil`.
        public let violation: String?
    }

    /// Runs `input` against a freshly seeded world; returns the broken property, or `nil`.
    public static func run(_ input: [UInt8]) async -> String? {
        await outcome(of: input).violation
    }

    /// Runs `input` against a freshly seeded world; returns its status and the broken property, if any.
    public static func outcome(of input: [UInt8]) async -> Outcome {
        let (options, input) = FuzzInput.options(of: input)
        let memory: InMemoryGrantStore
        let engine: AuthEngine
        let world: FuzzWorld
        do {
            if let ready = prepared.withLock({ $0 }) {
                world = ready
            } else {
                world = try await FuzzWorld()
                prepared.withLock { $0 = world }
            }
            (memory, engine) = try world.instantiate(options)
        } catch {
            return Outcome(status: 0, violation: "the fuzz world could not be seeded: \(error)")
        }
        let request = FuzzInput.request(from: input, placeholders: world.placeholders)
        let before = memory.snapshot()
        let response = await engine.handle(request: request)
        return Outcome(
            status: response.status,
            violation: check(response, request: request, before: before, after: memory.snapshot(), options: options)
        )
    }

    private static func check(
        _ response: EndpointResponse,
        request: EndpointRequest,
        before: InMemoryGrantStore.Snapshot,
        after: InMemoryGrantStore.Snapshot,
        options: FuzzWorld.Options
    ) -> String? {
        let permittedFailure = options.sessionStartFails && response.status == 503
        if response.status >= 500 && !permittedFailure {
            return "status \(response.status) for \(request)"
        }
        if response.headers["Cache-Control"] != "no-store" || response.headers["Content-Type"] != "application/json" {
            return "missing no-store or JSON headers on \(response.status)"
        }
        guard response.status != 200 else { return nil }
        var after = after
        let revoked = after.grants.filter { id, grant in
            before.grants[id]?.revocation == nil && grant.revocation != nil
        }
        guard revoked.count <= 1 else { return "a refusal revoked \(revoked.count) grants" }
        if let (id, grant) = revoked.first {
            guard grant.revocation?.reason == .codeReplayed || grant.revocation?.reason == .refreshTokenReused else {
                return "a refusal revoked a grant for \(String(describing: grant.revocation?.reason))"
            }
            after.grants[id]?.revocation = nil
        }
        return after == before ? nil : "a refused request (\(response.status)) changed the store"
    }
}
