// SPDX-License-Identifier: Apache-2.0

/// A rate limiter's answer for one attempt.
public enum RateLimitDecision: Hashable, Sendable {
    /// The attempt may proceed; it has been counted.
    case admitted
    /// Too many attempts: the engine answers 429 with `Retry-After: retryAfterSeconds` (RFC 6585 §4,
    /// RFC 9110 §10.2.3) and the attempt is not counted. At least 1.
    case limited(retryAfterSeconds: Int)
}
