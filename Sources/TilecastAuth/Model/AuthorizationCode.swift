// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A stored authorization code (RFC 6749 §4.1.2), keyed by the digest of the code.
///
/// A code is bound to its client and redirect URI (RFC 6749 §4.1.2, §10.6) and to its PKCE challenge
/// (RFC 7636 §4.4). It is single-use: ``redemption`` records the grant it became, and a store keeps a
/// redeemed code until that grant expires, so that a replay can be detected and the grant revoked
/// (RFC 6749 §4.1.2, §10.5).
public struct AuthorizationCode: Hashable, Sendable {
    /// When and into which grant a code was redeemed.
    public struct Redemption: Hashable, Sendable {
        /// The grant created from the code.
        public var grant: GrantID
        /// When the code was redeemed.
        public var redeemedAt: Date

        public init(grant: GrantID, redeemedAt: Date) {
            self.grant = grant
            self.redeemedAt = redeemedAt
        }
    }

    /// The digest of the code.
    public var digest: SecretDigest
    /// The client the code was issued to.
    public var client: ClientID
    /// The account that approved the request.
    public var account: AccountID
    /// The redirect URI of the authorization request, compared byte for byte at the exchange.
    public var redirectURI: String
    /// The approved scope.
    public var scope: Scope
    /// The PKCE challenge; a code without an S256 challenge is never redeemable.
    public var challenge: CodeChallenge?
    /// When the code was issued — or, when the authorize step says so, when the user authenticated for the
    /// approval that issued it. A code issued at or before its account's grants were all revoked is never
    /// redeemed (``GrantStore/redeemCode(_:issuing:at:)``).
    public var issuedAt: Date
    /// The first instant at which the code is no longer valid.
    public var expiresAt: Date
    /// Set once the code has been redeemed.
    public var redemption: Redemption?

    public init(
        digest: SecretDigest,
        client: ClientID,
        account: AccountID,
        redirectURI: String,
        scope: Scope,
        challenge: CodeChallenge?,
        issuedAt: Date,
        expiresAt: Date,
        redemption: Redemption? = nil
    ) {
        self.digest = digest
        self.client = client
        self.account = account
        self.redirectURI = redirectURI
        self.scope = scope
        self.challenge = challenge
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.redemption = redemption
    }
}
