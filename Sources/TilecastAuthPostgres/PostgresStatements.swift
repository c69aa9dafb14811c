// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Foundation

/// Every statement the store and the rate limiter send, for one schema.
///
/// Each `GrantStore` operation is one of these — one round trip, one transaction — except that a
/// refused revocation or rotation reads once more to say why.
struct PostgresStatements: Sendable {
    /// The grant's columns, in the order ``PostgresRow/grant(at:)`` reads them.
    static let grantColumns =
        "g.id, g.client_id, g.account_id, g.scope, g.created_at, g.expires_at, g.current_refresh_token, g.session, g.revoked_at, g.revocation_reason"

    let insertCode: PostgresStatement
    let code: PostgresStatement
    let redeemCode: PostgresStatement
    let createGrant: PostgresStatement
    let refreshToken: PostgresStatement
    let rotateRefreshToken: PostgresStatement
    let rotateRefreshTokenStartingSession: PostgresStatement
    let replaceSession: PostgresStatement
    let revokeGrant: PostgresStatement
    let revokeGrants: PostgresStatement
    let accessToken: PostgresStatement
    let session: PostgresStatement
    let grant: PostgresStatement
    let grantsOfAccount: PostgresStatement
    let removeExpired: PostgresStatement
    let rateLimitAdmit: PostgresStatement
    let rateLimitWait: PostgresStatement
    let rateLimitPrune: PostgresStatement

    /// The statements for the schema `s`, already quoted.
    init(schema s: String) {
        let grant = Self.grantColumns
        func statement(_ name: String, _ sql: String) -> PostgresStatement {
            PostgresStatement(name: "tilecast_\(name)", sql: sql)
        }
        insertCode = statement(
            "insert_code",
            """
            INSERT INTO \(s).codes (digest, client_id, account_id, redirect_uri, scope, challenge_method,
                challenge_value, issued_at, expires_at, redeemed_grant, redeemed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            """
        )
        code = statement(
            "code",
            """
            SELECT digest, client_id, account_id, redirect_uri, scope, challenge_method, challenge_value,
                issued_at, expires_at, redeemed_grant, redeemed_at
            FROM \(s).codes WHERE digest = $1
            """
        )
        redeemCode = statement(
            "redeem_code",
            """
            SELECT outcome, grant_id FROM \(s).redeem_code($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)
            """
        )
        createGrant = statement(
            "create_grant",
            """
            SELECT \(s).create_grant($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                $18, $19, $20, $21, $22, $23, $24, $25, $26)
            """
        )
        refreshToken = statement(
            "refresh_token",
            """
            SELECT \(grant), t.digest, t.issued_at, t.expires_at, t.state, t.state_changed_at, t.successor
            FROM \(s).refresh_tokens t JOIN \(s).grants g ON g.id = t.grant_id WHERE t.digest = $1
            """
        )
        rotateRefreshToken = statement(
            "rotate_refresh_token",
            "SELECT \(s).rotate_refresh_token($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        )
        rotateRefreshTokenStartingSession = statement(
            "rotate_refresh_token_starting_session",
            """
            SELECT \(s).rotate_refresh_token_starting_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
                $14, $15)
            """
        )
        replaceSession = statement(
            "replace_session",
            "SELECT outcome, previous FROM \(s).replace_session($1, $2, $3, $4, $5, $6)"
        )
        revokeGrant = statement(
            "revoke_grant",
            """
            UPDATE \(s).grants g SET revoked_at = $2, revocation_reason = $3
            WHERE g.id = $1 AND g.revoked_at IS NULL AND g.expires_at > $2
            RETURNING \(grant)
            """
        )
        revokeGrants = statement("revoke_account", "SELECT \(grant) FROM \(s).revoke_account($1, $2, $3) g")
        accessToken = statement(
            "access_token",
            """
            SELECT \(grant), t.digest, t.issued_at, t.expires_at
            FROM \(s).access_tokens t JOIN \(s).grants g ON g.id = t.grant_id WHERE t.digest = $1
            """
        )
        session = statement(
            "session",
            """
            SELECT \(grant), t.digest, t.started_at, t.expires_at
            FROM \(s).sessions t JOIN \(s).grants g ON g.id = t.grant_id WHERE t.digest = $1
            """
        )
        self.grant = statement("grant", "SELECT \(grant) FROM \(s).grants g WHERE g.id = $1")
        grantsOfAccount = statement(
            "grants_of_account",
            "SELECT \(grant) FROM \(s).grants g WHERE g.account_id = $1 ORDER BY g.created_at, g.id"
        )
        // Takes the lock the two functions take (advisory locks nest within a session), so that a call
        // skipped because another instance prunes answers NULL rather than a 0 that reads as "nothing
        // expired". The functions still take it themselves, for callers of a release before this one.
        removeExpired = statement(
            "remove_expired",
            """
            SELECT CASE WHEN pg_try_advisory_xact_lock(hashtext('tilecast-auth maintenance'), hashtext('\(s)'))
                THEN \(s).remove_expired($1) + \(s).remove_expired_revocations($1) END
            """
        )
        // One attempt against a token bucket: the key's row is inserted full-less-one, or locked (ON CONFLICT
        // takes the row lock and re-reads the latest version), refilled for the time passed and debited if
        // it holds a token. No row back means no token: nothing was written. Its transaction, and only it,
        // commits asynchronously (`set_config(…, true)` lasts until the commit): an admission does not wait
        // for its WAL record to reach the disk. Transaction-local, so that nothing of it stays on a
        // connection a pooler (PgBouncer in transaction mode) may hand to the store next. It takes one
        // attempt, or `$5` at once when `$5` is more than one and the bucket still holds half its capacity
        // after: a lease (`PostgresRateLimiter`, "Leases"), whose count `granted` returns.
        let refilled = "least($3, r.tokens + greatest(0, $2 - r.updated_at) / $4)"
        let granted = "CASE WHEN $5 > 1 AND \(refilled) - $5 >= $3 / 2 THEN $5 ELSE 1 END"
        rateLimitAdmit = statement(
            "rate_limit_admit",
            """
            INSERT INTO \(s).rate_limits AS r (key, tokens, updated_at, granted)
            SELECT $1, $3 - 1, $2, 1 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS asynchronous
            ON CONFLICT (key) DO UPDATE SET
                tokens = \(refilled) - \(granted),
                updated_at = greatest(r.updated_at, $2),
                granted = \(granted)
            WHERE \(refilled) >= 1
            RETURNING r.granted
            """
        )
        // The whole seconds until the key's bucket holds a token again, for a refused attempt: the wait to
        // the microsecond, rounded up, as `TokenBucket` computes it.
        rateLimitWait = statement(
            "rate_limit_wait",
            """
            SELECT greatest(1, ceil(round(((1 - \(refilled)) * $4)::numeric, 6)))::float8
            FROM \(s).rate_limits r WHERE r.key = $1
            """
        )
        rateLimitPrune = statement("rate_limit_prune", "DELETE FROM \(s).rate_limits WHERE updated_at <= $1")
    }
}
#endif
