// SPDX-License-Identifier: Apache-2.0

/// The backend call a failure happened in.
///
/// A struct with static members rather than an enum, so a later release can name a new call without
/// breaking a caller's `switch`; compare with `==`, or log ``rawValue``.
public struct BackendOperation: Hashable, Sendable, CustomStringConvertible {
    /// The call's name in snake case, as logs and metrics label it: `redeem_code`.
    public let rawValue: String

    private init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// The rate limiter's ``RateLimiter/admit(_:at:)``.
    public static let admitAttempt = BackendOperation("admit_attempt")
    /// The account directory's ``AccountDirectory/status(of:)``.
    public static let accountStatus = BackendOperation("account_status")
    /// ``GrantStore/authorizationCode(_:)``.
    public static let loadCode = BackendOperation("load_code")
    /// ``GrantStore/redeemCode(_:issuing:at:)``.
    public static let redeemCode = BackendOperation("redeem_code")
    /// ``GrantStore/refreshToken(_:)``.
    public static let loadRefreshToken = BackendOperation("load_refresh_token")
    /// ``GrantStore/rotateRefreshToken(_:replacing:successor:accessToken:at:)``.
    public static let rotateRefreshToken = BackendOperation("rotate_refresh_token")
    /// ``GrantStore/rotateRefreshToken(_:replacing:successor:accessToken:startingSession:at:)``: the rotation
    /// and the Studio session's start in one operation, which wrote neither when it failed.
    public static let rotateRefreshTokenStartingSession = BackendOperation("rotate_refresh_token_starting_session")
    /// ``GrantStore/replaceSession(of:with:at:)``.
    public static let replaceSession = BackendOperation("replace_session")
    /// ``GrantStore/revokeGrant(_:reason:at:)``.
    public static let revokeGrant = BackendOperation("revoke_grant")
}
