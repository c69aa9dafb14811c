// SPDX-License-Identifier: Apache-2.0

/// The backend call a failure happened in.
public enum BackendOperation: String, Hashable, Sendable {
    case admitAttempt = "admit_attempt"
    case accountStatus = "account_status"
    case loadCode = "load_code"
    case redeemCode = "redeem_code"
    case loadRefreshToken = "load_refresh_token"
    case rotateRefreshToken = "rotate_refresh_token"
    case replaceSession = "replace_session"
    case revokeGrant = "revoke_grant"
}
