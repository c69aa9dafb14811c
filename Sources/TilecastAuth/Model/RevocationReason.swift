// SPDX-License-Identifier: Apache-2.0

/// Why a grant was revoked.
///
/// A struct with static members rather than an enum, so a later release can add a reason without
/// breaking a caller's `switch` — and so an instance running this release reads a reason a newer
/// instance wrote to a shared store instead of failing on it. Compare with `==`; ``rawValue`` is what a
/// store keeps (`code_replayed`).
public struct RevocationReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason in snake case, as stores keep it.
    public let rawValue: String

    /// A reason read back from a store: any snake-case name of 1 to 64 characters, known to this release
    /// or not; `nil` for anything else, which no release writes.
    public init?(rawValue: String) {
        let bytes = rawValue.utf8
        guard (1...64).contains(bytes.count),
            bytes.allSatisfy({ (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "_") })
        else { return nil }
        self.rawValue = rawValue
    }

    private init(known rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// A used authorization code came back with valid proof (RFC 6749 §4.1.2, OAuth 2.1 §4.1.3).
    public static let codeReplayed = RevocationReason(known: "code_replayed")
    /// A rotated refresh token came back (RFC 9700 §4.14.2, OAuth 2.1 §4.3.1).
    public static let refreshTokenReused = RevocationReason(known: "refresh_token_reused")
    /// The grant's Studio session was signed out: signing the session out revokes the grant.
    public static let signedOut = RevocationReason(known: "signed_out")
    /// The embedding server revoked the grant: the user removed the app, an administrator acted, or the
    /// password changed (RFC 9700 §4.14.2).
    public static let revokedByServer = RevocationReason(known: "revoked_by_server")
}
