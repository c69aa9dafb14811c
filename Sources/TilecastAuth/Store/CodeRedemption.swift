// SPDX-License-Identifier: Apache-2.0

/// The outcome of ``GrantStore/redeemCode(_:issuing:at:)``.
public enum CodeRedemption: Hashable, Sendable {
    /// The code was unused and unexpired; it is now redeemed and the issuance is stored.
    case redeemed
    /// The code had already been redeemed into `grant`. Nothing was written.
    case alreadyRedeemed(grant: GrantID)
    /// No code has this digest, or it expired. Nothing was written.
    case notFound
}
