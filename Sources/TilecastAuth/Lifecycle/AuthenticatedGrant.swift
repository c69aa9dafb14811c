// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Who a valid session cookie or access token belongs to.
public struct AuthenticatedGrant: Hashable, Sendable {
    /// The grant the cookie or token belongs to.
    public let grant: GrantID
    /// The account.
    public let account: AccountID
    /// The client the grant belongs to.
    public let client: ClientID
    /// The grant's scope.
    public let scope: Scope
    /// When the cookie's session or the token expires.
    public let expiresAt: Date
}
