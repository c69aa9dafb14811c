// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``GrantStore/replaceSession(of:with:at:)``.
public enum SessionReplacement: Hashable, Sendable {
    /// The new session is stored and is the grant's only live session; `previous` is the digest of the
    /// session it ended, if there was one.
    case replaced(previous: SecretDigest?)
    /// The grant does not exist, is revoked or is past its absolute expiry. Nothing was written.
    case grantNotLive
}
