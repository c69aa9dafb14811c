// SPDX-License-Identifier: Apache-2.0

@testable import TilecastAuth

/// Test-only equality of the machine's actions, so that each step of a test is one assertion. Secrets
/// compare by digest — what they are to the store — and a cookie by the header it sends.
extension ExchangeStateMachine.Action: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.admit(let a), .admit(let b)): a == b
        case (.loadCode(let a), .loadCode(let b)): a == b
        case (.loadRefreshToken(let a), .loadRefreshToken(let b)): a == b
        case (.checkAccount(let a), .checkAccount(let b)): a == b
        case (.redeemCode(let a), .redeemCode(let b)): a.code == b.code && a.issuance == b.issuance
        case (.rotateRefreshToken(let p1, let c1, let s1, let t1), .rotateRefreshToken(let p2, let c2, let s2, let t2)):
            p1 == p2 && c1 == c2 && s1 == s2 && t1 == t2
        case (
            .rotateRefreshTokenStartingSession(let p1, let c1, let s1, let t1, let session1),
            .rotateRefreshTokenStartingSession(let p2, let c2, let s2, let t2, let session2)
        ):
            p1 == p2 && c1 == c2 && s1 == s2 && t1 == t2 && session1 == session2
        case (.replaceSession(let a), .replaceSession(let b)): a == b
        case (.revokeGrant(let a, let reasonA), .revokeGrant(let b, let reasonB)): a == b && reasonA == reasonB
        case (.respond(let a), .respond(let b)): a == b
        case (.admit, _), (.loadCode, _), (.loadRefreshToken, _), (.checkAccount, _), (.redeemCode, _),
            (.rotateRefreshToken, _), (.rotateRefreshTokenStartingSession, _), (.replaceSession, _), (.revokeGrant, _),
            (.respond, _):
            false
        }
    }
}

extension ExchangeOutcome: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.success(let credentialA, let cookieA), .success(let credentialB, let cookieB)):
            credentialA?.accessToken.digest == credentialB?.accessToken.digest
                && credentialA?.refreshToken.digest == credentialB?.refreshToken.digest
                && credentialA?.expiresIn == credentialB?.expiresIn && credentialA?.scope == credentialB?.scope
                && cookieA?.headerValue == cookieB?.headerValue
        case (.refused(let a), .refused(let b)): a == b
        case (.success, _), (.refused, _): false
        }
    }
}
