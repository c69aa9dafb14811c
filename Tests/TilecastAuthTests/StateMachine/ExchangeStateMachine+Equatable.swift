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
        case (.rotateRefreshToken(let a), .rotateRefreshToken(let b)): a.storesSame(as: b)
        case (.rotateRefreshTokenStartingSession(let a), .rotateRefreshTokenStartingSession(let b)):
            a.storesSame(as: b) && a.startingSession == b.startingSession
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

extension PlannedRotation {
    /// Whether the two rotations ask the store for the same thing: the same presented and current
    /// tokens, and the same successor and access token to store.
    func storesSame(as other: PlannedRotation) -> Bool {
        presented == other.presented && current == other.current && successor == other.successor
            && accessToken == other.accessToken
    }
}

extension ExchangeOutcome: Equatable {
    /// A success's credential and cookie, however the outcome holds them: a rotation's answer is its
    /// credential without a cookie.
    var answer: (credential: IssuedCredential?, cookie: SessionCookie?)? {
        switch self {
        case .success(let credential, let cookie): (credential, cookie)
        case .rotated(let rotation): (rotation.credential, nil)
        case .redeemed(let redemption): (redemption.credential, redemption.cookie)
        case .refused: nil
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.answer, rhs.answer) {
        case (let a?, let b?):
            a.credential?.accessToken.digest == b.credential?.accessToken.digest
                && a.credential?.refreshToken.digest == b.credential?.refreshToken.digest
                && a.credential?.expiresIn == b.credential?.expiresIn && a.credential?.scope == b.credential?.scope
                && a.cookie?.headerValue == b.cookie?.headerValue
        case (nil, nil):
            if case .refused(let a) = lhs, case .refused(let b) = rhs { a == b } else { false }
        default: false
        }
    }
}
