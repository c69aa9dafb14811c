// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Foundation
import TilecastAuth

extension PostgresRow {
    /// A grant from ``PostgresStatements/grantColumns`` starting at `offset`.
    func grant(at offset: Int = 0) throws(PostgresError) -> Grant {
        guard let scope = Scope(try text(offset + 3)) else {
            throw PostgresError(.unexpectedResult, message: "a stored scope is not a scope")
        }
        var revocation: Grant.Revocation?
        if !isNull(offset + 8) {
            guard let reason = RevocationReason(rawValue: try text(offset + 9)) else {
                throw PostgresError(.unexpectedResult, message: "an unknown revocation reason")
            }
            revocation = Grant.Revocation(revokedAt: try date(offset + 8), reason: reason)
        }
        return Grant(
            id: try grantID(offset),
            client: ClientID(try text(offset + 1)),
            account: AccountID(try text(offset + 2)),
            scope: scope,
            createdAt: try date(offset + 4),
            expiresAt: try date(offset + 5),
            currentRefreshToken: try optionalDigest(offset + 6),
            session: try optionalDigest(offset + 7),
            revocation: revocation
        )
    }

    /// A code from ``PostgresStatements/code``'s columns.
    func authorizationCode() throws(PostgresError) -> AuthorizationCode {
        guard let scope = Scope(try text(4)) else {
            throw PostgresError(.unexpectedResult, message: "a stored scope is not a scope")
        }
        var challenge: CodeChallenge?
        if let method = try optionalText(5) {
            challenge = CodeChallenge(method: CodeChallenge.Method(rawValue: method), value: try text(6))
        }
        var redemption: AuthorizationCode.Redemption?
        if !isNull(9) {
            redemption = AuthorizationCode.Redemption(grant: try grantID(9), redeemedAt: try date(10))
        }
        return AuthorizationCode(
            digest: try digest(0),
            client: ClientID(try text(1)),
            account: AccountID(try text(2)),
            redirectURI: try text(3),
            scope: scope,
            challenge: challenge,
            issuedAt: try date(7),
            expiresAt: try date(8),
            redemption: redemption
        )
    }

    /// A refresh token from the columns after a grant's, for ``PostgresStatements/refreshToken``.
    func refreshToken(at offset: Int, grant: GrantID) throws(PostgresError) -> RefreshToken {
        let state: RefreshToken.State
        switch try int2(offset + 3) {
        case 0: state = .active
        case 1: state = .rotated(rotatedAt: try date(offset + 4), successor: try digest(offset + 5))
        case 2: state = .retired(retiredAt: try date(offset + 4))
        default: throw PostgresError(.unexpectedResult, message: "an unknown refresh token state")
        }
        return RefreshToken(
            digest: try digest(offset),
            grant: grant,
            issuedAt: try date(offset + 1),
            expiresAt: try date(offset + 2),
            state: state
        )
    }
}
#endif
