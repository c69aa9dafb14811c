// SPDX-License-Identifier: Apache-2.0

/// The cookie's `SameSite` attribute (rfc6265bis §4.1.2.7).
public enum SameSite: String, Hashable, Sendable, CaseIterable {
    /// Sent on same-site requests only.
    case strict = "Strict"
    /// Sent on same-site requests and cross-site top-level navigations — the usual Studio setting.
    case lax = "Lax"
    /// Sent on every request; needs `Secure`.
    case none = "None"
}
