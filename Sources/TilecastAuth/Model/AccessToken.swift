// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A stored native access token — the `credential` a code exchange or refresh returns — keyed by the
/// digest of the token. It is opaque and valid only while its grant is live (RFC 7009 §2.1).
public struct AccessToken: Hashable, Sendable {
    /// The digest of the token.
    public var digest: SecretDigest
    /// The grant the token belongs to.
    public var grant: GrantID
    /// When the token was issued.
    public var issuedAt: Date
    /// The first instant at which the token is no longer valid.
    public var expiresAt: Date

    public init(digest: SecretDigest, grant: GrantID, issuedAt: Date, expiresAt: Date) {
        self.digest = digest
        self.grant = grant
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}
