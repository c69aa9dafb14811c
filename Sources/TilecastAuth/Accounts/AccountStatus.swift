// SPDX-License-Identifier: Apache-2.0

/// Whether an account may still sign in.
public enum AccountStatus: Hashable, Sendable {
    /// The account may sign in and use its grants.
    case active
    /// The account is no longer active — suspended, deleted or disabled. The endpoint answers 403
    /// before consuming, rotating or creating anything, and its tokens and sessions stop authenticating.
    case inactive
}
