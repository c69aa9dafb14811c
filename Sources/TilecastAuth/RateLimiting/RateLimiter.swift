// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Decides whether an authentication attempt may proceed.
///
/// The engine asks once per `POST`, before it parses the body or touches the store, so a limited
/// request changes nothing. Several server instances share limits by sharing one implementation backed
/// by a shared database; ``InMemoryRateLimiter`` serves one process.
public protocol RateLimiter: Sendable {
    /// Counts an attempt for `key` at `now`, or refuses it without counting it.
    ///
    /// Throw only for infrastructure failure. The engine then refuses the request with 503 — it fails
    /// closed — and changes nothing.
    func admit(_ key: RateLimitKey, at now: Date) async throws -> RateLimitDecision
}
