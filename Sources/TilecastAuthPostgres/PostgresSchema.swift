// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Foundation

/// The store's tables and functions, as numbered migrations.
///
/// A migration is applied once, in order, inside the transaction that records it in
/// `schema_migrations`; ``PostgresGrantStore/migrate()`` takes an advisory lock first, so servers
/// starting together apply each migration once. Migrations are never edited once released: a change
/// is a new migration.
///
/// A migration also says the oldest library schema version whose statements still work against a
/// database it has been applied to (``Migration/oldestCompatible``), recorded beside it from version 5
/// on. A release that only adds what older statements never see — a column with a default, a table, a
/// function, a function's body with the same signature and results — keeps the version before working,
/// and its instances keep starting during a rolling deploy while newer ones have migrated the database;
/// ``PostgresGrantStore/migrate()`` and ``PostgresGrantStore/schemaVersion()`` refuse a database only
/// when one of its migrations needs a later library than this one.
///
/// Conventions. Every secret is a 32-byte SHA-256 digest in a column of the domain `sha256_digest`, a
/// `bytea` checked to be 32 bytes long (a table constraint on each column before version 8); nothing else
/// about a secret is stored. Times are `float8` seconds since 2001-01-01 00:00 UTC —
/// Foundation's reference date — so a `Date` comes back bit for bit. `{schema}` is replaced by the
/// configured schema, already checked to be a plain identifier.
enum PostgresSchema {
    struct Migration {
        let version: Int
        let summary: String
        let sql: String
        /// The oldest library schema version whose statements still work once this migration is applied:
        /// its own version unless it keeps older ones working. Recorded in `schema_migrations` from
        /// version 5 on; a row without it counts as needing its own version.
        let oldestCompatible: Int

        init(version: Int, summary: String, sql: String, oldestCompatible: Int? = nil) {
            precondition((oldestCompatible ?? version) <= version, "a migration cannot need a later library")
            self.version = version
            self.summary = summary
            self.sql = sql
            self.oldestCompatible = oldestCompatible ?? version
        }
    }

    /// The first version whose row in `schema_migrations` records ``Migration/oldestCompatible``: the
    /// migration that adds the column.
    static let compatibilityRecordedFrom = 5

    /// The version this library's statements are written against.
    static var currentVersion: Int { migrations.last!.version }

    static let migrations: [Migration] = [
        Migration(version: 1, summary: "codes, grants, tokens, sessions, rate limits", sql: version1),
        Migration(
            version: 2,
            summary: "account revocations end codes and sign-ins under way; functions with a fixed search_path",
            sql: version2
        ),
        Migration(
            version: 3,
            summary: "redeem_code locks and updates a code by its key, without nested function calls",
            sql: version3
        ),
        Migration(
            version: 4,
            summary: "plans kept for rotations and creations; rotations lock what they read; pruning never waits",
            sql: version4
        ),
        Migration(
            version: 5,
            summary: "each migration records the oldest library version it keeps working; pruning reads what expired",
            sql: version5,
            oldestCompatible: 4
        ),
        Migration(
            version: 6,
            summary: "a refresh's rotation and the Studio session it starts in one call",
            sql: version6,
            oldestCompatible: 4
        ),
        Migration(
            version: 7,
            summary: "a redemption's writes, and a rotation's with or without a session, each in one statement",
            sql: version7,
            oldestCompatible: 4
        ),
        Migration(
            version: 8,
            summary: "a digest's length and a refresh token's state checked by their columns' domains",
            sql: version8
        ),
        Migration(
            version: 9,
            summary: "the attempts a rate limit admission granted at once, for an instance's lease",
            sql: version9,
            oldestCompatible: 8
        ),
    ]

    /// A migration applied to a database, as `schema_migrations` records it.
    struct AppliedMigration {
        let version: Int
        /// The oldest library schema version it keeps working (``Migration/oldestCompatible``).
        let oldestCompatible: Int

        /// The rows of ``appliedVersionsSQL(schema:)``.
        static func rows(of result: PostgresResult) throws(PostgresError) -> [AppliedMigration] {
            try result.rows.map { row throws(PostgresError) in
                AppliedMigration(version: Int(try row.int4(0)), oldestCompatible: Int(try row.int4(1)))
            }
        }
    }

    /// The versions applied to a database, with the oldest library version each keeps working (a row
    /// written before version 5, without the column, or by hand without it, counts as needing its own).
    /// Read through `to_jsonb` so that one statement serves a database with the column and one without.
    static func appliedVersionsSQL(schema: String) -> String {
        """
        SELECT m.version, coalesce((to_jsonb(m) ->> 'oldest_compatible')::int4, m.version)
        FROM \(schema).schema_migrations m ORDER BY m.version
        """
    }

    /// The migration's SQL for `schema`.
    static func sql(_ migration: Migration, schema: String) -> String {
        migration.sql.replacingOccurrences(of: "{schema}", with: schema)
    }

    /// The statement that records `migration` as applied in `schema`'s `schema_migrations`, with the
    /// oldest library version it keeps working from ``compatibilityRecordedFrom`` on.
    static func recordSQL(_ migration: Migration, schema: String) -> String {
        // A SQL string literal: a quote in the summary (migration 6 has one) is doubled.
        let summary = "'" + migration.summary.replacingOccurrences(of: "'", with: "''") + "'"
        let record =
            migration.version >= compatibilityRecordedFrom
            ? "(version, summary, oldest_compatible) VALUES (\(migration.version), \(summary), \(migration.oldestCompatible))"
            : "(version, summary) VALUES (\(migration.version), \(summary))"
        return "INSERT INTO \(schema).schema_migrations \(record)"
    }

    private static let version1 = """
        CREATE TABLE {schema}.codes (
            digest bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
            client_id text NOT NULL,
            account_id text NOT NULL,
            redirect_uri text NOT NULL,
            scope text NOT NULL,
            challenge_method text,
            challenge_value text,
            issued_at float8 NOT NULL,
            expires_at float8 NOT NULL,
            redeemed_grant uuid,
            redeemed_at float8,
            CHECK ((redeemed_grant IS NULL) = (redeemed_at IS NULL)),
            CHECK ((challenge_method IS NULL) = (challenge_value IS NULL))
        );
        -- Pruning: unredeemed codes by their own expiry, redeemed ones through their grant.
        CREATE INDEX codes_unredeemed_expiry ON {schema}.codes (expires_at) WHERE redeemed_grant IS NULL;
        CREATE INDEX codes_redeemed_grant ON {schema}.codes (redeemed_grant) WHERE redeemed_grant IS NOT NULL;

        CREATE TABLE {schema}.grants (
            id uuid PRIMARY KEY,
            client_id text NOT NULL,
            account_id text NOT NULL,
            scope text NOT NULL,
            created_at float8 NOT NULL,
            expires_at float8 NOT NULL,
            current_refresh_token bytea CHECK (octet_length(current_refresh_token) = 32),
            session bytea CHECK (octet_length(session) = 32),
            revoked_at float8,
            revocation_reason text,
            CHECK ((revoked_at IS NULL) = (revocation_reason IS NULL))
        );
        CREATE INDEX grants_account ON {schema}.grants (account_id, created_at);
        CREATE INDEX grants_expiry ON {schema}.grants (expires_at);

        -- state: 0 active, 1 rotated (state_changed_at = rotatedAt, successor set), 2 retired.
        CREATE TABLE {schema}.refresh_tokens (
            digest bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
            grant_id uuid NOT NULL REFERENCES {schema}.grants (id) ON DELETE CASCADE,
            issued_at float8 NOT NULL,
            expires_at float8 NOT NULL,
            state smallint NOT NULL CHECK (state IN (0, 1, 2)),
            state_changed_at float8,
            successor bytea CHECK (octet_length(successor) = 32),
            CHECK ((state = 0) = (state_changed_at IS NULL)),
            CHECK ((state = 1) = (successor IS NOT NULL))
        );
        CREATE INDEX refresh_tokens_grant ON {schema}.refresh_tokens (grant_id);
        CREATE INDEX refresh_tokens_expiry ON {schema}.refresh_tokens (expires_at);

        CREATE TABLE {schema}.access_tokens (
            digest bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
            grant_id uuid NOT NULL REFERENCES {schema}.grants (id) ON DELETE CASCADE,
            issued_at float8 NOT NULL,
            expires_at float8 NOT NULL
        );
        CREATE INDEX access_tokens_grant ON {schema}.access_tokens (grant_id);
        CREATE INDEX access_tokens_expiry ON {schema}.access_tokens (expires_at);

        CREATE TABLE {schema}.sessions (
            digest bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
            grant_id uuid NOT NULL REFERENCES {schema}.grants (id) ON DELETE CASCADE,
            started_at float8 NOT NULL,
            expires_at float8 NOT NULL
        );
        CREATE INDEX sessions_grant ON {schema}.sessions (grant_id);
        CREATE INDEX sessions_expiry ON {schema}.sessions (expires_at);

        CREATE TABLE {schema}.rate_limits (
            key text PRIMARY KEY,
            tokens float8 NOT NULL,
            updated_at float8 NOT NULL
        );
        CREATE INDEX rate_limits_updated ON {schema}.rate_limits (updated_at);

        -- Redeems a code and stores its grant, tokens and session in one transaction (GrantStore.redeemCode).
        -- The conditional UPDATE is the single-use guarantee: of concurrent callers, the row lock admits one
        -- at a time and each re-checks `redeemed_grant IS NULL` against the latest version (READ COMMITTED),
        -- so exactly one finds it unredeemed. Outcome 0 redeemed, 1 already redeemed (into grant_id),
        -- 2 not found or expired.
        CREATE FUNCTION {schema}.redeem_code(
            p_code bytea, p_now float8,
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8,
            OUT outcome smallint, OUT grant_id uuid
        ) LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE {schema}.codes SET redeemed_grant = p_grant, redeemed_at = p_now
                WHERE digest = p_code AND redeemed_grant IS NULL AND expires_at > p_now;
            IF FOUND THEN
                -- The grant and everything it starts with, in one statement.
                WITH new_grant AS (
                    INSERT INTO {schema}.grants VALUES (
                        p_grant, p_client, p_account, p_scope, p_created, p_expires,
                        p_current_refresh, p_session_pointer, NULL, NULL)
                ), access AS (
                    INSERT INTO {schema}.access_tokens
                        SELECT p_access, p_access_grant, p_access_issued, p_access_expires WHERE p_access IS NOT NULL
                ), refresh AS (
                    INSERT INTO {schema}.refresh_tokens
                        SELECT p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                            p_refresh_state, p_refresh_state_changed, p_refresh_successor
                        WHERE p_refresh IS NOT NULL
                )
                INSERT INTO {schema}.sessions
                    SELECT p_session, p_session_grant, p_session_started, p_session_expires WHERE p_session IS NOT NULL;
                outcome := 0;
                grant_id := p_grant;
                RETURN;
            END IF;
            -- A new statement, so a new snapshot: a redemption that won meanwhile is visible.
            SELECT c.redeemed_grant INTO grant_id FROM {schema}.codes c WHERE c.digest = p_code;
            outcome := CASE WHEN grant_id IS NOT NULL THEN 1 ELSE 2 END;
        END $$;

        -- Rotates a refresh token (GrantStore.rotateRefreshToken). The compare-and-set is the UPDATE of the
        -- grant's current token: concurrent callers naming the same `p_current` queue on the grant's row
        -- lock and re-check `current_refresh_token = p_current` against the latest version, so exactly one
        -- succeeds; everything else it writes hangs off that success. Outcome 0 rotated, 1 not found,
        -- 2 grant not live, 3 superseded.
        CREATE FUNCTION {schema}.rotate_refresh_token(
            p_presented bytea, p_current bytea, p_now float8,
            p_successor bytea, p_successor_grant uuid, p_successor_issued float8, p_successor_expires float8,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8
        ) RETURNS smallint LANGUAGE plpgsql AS $$
        DECLARE
            v_grant uuid;
            v_live boolean;
        BEGIN
            UPDATE {schema}.grants g SET current_refresh_token = p_successor
                FROM {schema}.refresh_tokens t
                WHERE t.digest = p_presented AND g.id = t.grant_id
                  AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                  AND (p_presented = p_current OR (t.state = 1 AND t.successor = p_current));
            IF NOT FOUND THEN
                -- Nothing written; say why.
                SELECT t.grant_id, g.revoked_at IS NULL AND g.expires_at > p_now INTO v_grant, v_live
                    FROM {schema}.refresh_tokens t JOIN {schema}.grants g ON g.id = t.grant_id
                    WHERE t.digest = p_presented;
                IF NOT FOUND THEN
                    RETURN 1;
                ELSIF NOT v_live THEN
                    RETURN 2;
                END IF;
                RETURN 3;
            END IF;
            -- The presented token now names the new successor (keeping its rotatedAt on a retry); on a
            -- retry the successor it replaces is retired.
            UPDATE {schema}.refresh_tokens SET
                state = CASE WHEN digest = p_presented THEN 1 ELSE 2 END,
                state_changed_at = CASE
                    WHEN digest = p_presented AND p_presented <> p_current THEN state_changed_at
                    ELSE p_now END,
                successor = CASE WHEN digest = p_presented THEN p_successor ELSE NULL END
                WHERE digest = p_presented OR (digest = p_current AND p_presented <> p_current);
            WITH successor AS (
                INSERT INTO {schema}.refresh_tokens
                    VALUES (p_successor, p_successor_grant, p_successor_issued, p_successor_expires, 0, NULL, NULL)
            )
            INSERT INTO {schema}.access_tokens VALUES (p_access, p_access_grant, p_access_issued, p_access_expires);
            RETURN 0;
        END $$;

        -- Replaces a grant's session (GrantStore.replaceSession). The grant's row is locked first; the
        -- statements after it take new snapshots, so a session another caller stored meanwhile is the one
        -- ended. Outcome 0 replaced (previous = the session ended), 1 grant not live.
        CREATE FUNCTION {schema}.replace_session(
            p_grant uuid, p_now float8,
            p_session bytea, p_session_grant uuid, p_started float8, p_expires float8,
            OUT outcome smallint, OUT previous bytea
        ) LANGUAGE plpgsql AS $$
        BEGIN
            SELECT g.session INTO previous FROM {schema}.grants g
                WHERE g.id = p_grant AND g.revoked_at IS NULL AND g.expires_at > p_now
                FOR UPDATE;
            IF NOT FOUND THEN
                outcome := 1;
                RETURN;
            END IF;
            -- New statements, new snapshots: the session ended is the grant's latest one.
            WITH ended AS (
                DELETE FROM {schema}.sessions s WHERE s.digest = previous
            ), pointer AS (
                UPDATE {schema}.grants SET session = p_session WHERE id = p_grant
            )
            INSERT INTO {schema}.sessions VALUES (p_session, p_session_grant, p_started, p_expires);
            outcome := 0;
        END $$;

        -- Removes what can no longer matter at p_now (GrantStore.removeExpired) and returns how many rows.
        -- A redeemed code goes with its grant, at the grant's expiry, so a replay can revoke it until then.
        CREATE FUNCTION {schema}.remove_expired(p_now float8) RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
            v_total bigint := 0;
            v_count bigint;
        BEGIN
            DELETE FROM {schema}.codes WHERE redeemed_grant IS NULL AND expires_at <= p_now;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.codes c USING {schema}.grants g
                WHERE g.expires_at <= p_now AND c.redeemed_grant = g.id;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.access_tokens WHERE expires_at <= p_now;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.refresh_tokens WHERE expires_at <= p_now;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.sessions WHERE expires_at <= p_now;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.grants WHERE expires_at <= p_now;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            RETURN v_total + v_count;
        END $$;
        """
    /// Account-wide revocation covers codes and sign-ins under way (GrantStore.revokeGrants), and every
    /// function runs with a fixed `search_path`, so that no object another role creates in a schema
    /// earlier on the caller's path can stand in for a built-in.
    ///
    /// The account lock. `revoke_account` takes an exclusive transaction-scoped advisory lock on the
    /// account; `redeem_code` and `create_grant` take it shared, before the statements that decide. So a
    /// redemption or creation either holds the lock first — and commits before the revocation's
    /// statements start, which then see its grant and revoke it — or waits for the revocation to commit,
    /// and its statements, each with a new snapshot, see the revocation and refuse. Without it a grant
    /// inserted by a redemption still uncommitted was invisible to the revocation's UPDATE, and escaped.
    private static let version2 = """
        CREATE TABLE {schema}.account_revocations (
            account_id text PRIMARY KEY,
            revoked_at float8 NOT NULL
        );
        CREATE INDEX account_revocations_age ON {schema}.account_revocations (revoked_at);
        CREATE INDEX codes_unredeemed_account ON {schema}.codes (account_id) WHERE redeemed_grant IS NULL;

        -- The account's lock: exclusive for a revocation, shared for what a revocation must not miss.
        CREATE FUNCTION {schema}.lock_account(p_account text, p_exclusive boolean) RETURNS void
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            IF p_exclusive THEN
                PERFORM pg_advisory_xact_lock(hashtext('tilecast-auth accounts'), hashtext('{schema}/' || p_account));
            ELSE
                PERFORM pg_advisory_xact_lock_shared(hashtext('tilecast-auth accounts'), hashtext('{schema}/' || p_account));
            END IF;
        END $$;

        -- Whether the account's grants were revoked at or after p_time.
        CREATE FUNCTION {schema}.account_revoked_since(p_account text, p_time float8) RETURNS boolean
        LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
            SELECT EXISTS (SELECT 1 FROM {schema}.account_revocations r
                WHERE r.account_id = p_account AND r.revoked_at >= p_time)
        $$;

        -- A grant with its tokens and session, in one statement (redeem_code and create_grant).
        CREATE FUNCTION {schema}.insert_issuance(
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea, p_revoked float8, p_reason text,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8
        ) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            WITH new_grant AS (
                INSERT INTO {schema}.grants VALUES (
                    p_grant, p_client, p_account, p_scope, p_created, p_expires,
                    p_current_refresh, p_session_pointer, p_revoked, p_reason)
            ), access AS (
                INSERT INTO {schema}.access_tokens
                    SELECT p_access, p_access_grant, p_access_issued, p_access_expires WHERE p_access IS NOT NULL
            ), refresh AS (
                INSERT INTO {schema}.refresh_tokens
                    SELECT p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                        p_refresh_state, p_refresh_state_changed, p_refresh_successor
                    WHERE p_refresh IS NOT NULL
            )
            INSERT INTO {schema}.sessions
                SELECT p_session, p_session_grant, p_session_started, p_session_expires WHERE p_session IS NOT NULL;
        END $$;

        -- As in version 1, and a code issued at or before its account's last revocation is not found.
        CREATE OR REPLACE FUNCTION {schema}.redeem_code(
            p_code bytea, p_now float8,
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8,
            OUT outcome smallint, OUT grant_id uuid
        ) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_account text;
            v_issued float8;
        BEGIN
            SELECT c.account_id, c.issued_at INTO v_account, v_issued FROM {schema}.codes c WHERE c.digest = p_code;
            IF NOT FOUND THEN
                outcome := 2;
                RETURN;
            END IF;
            PERFORM {schema}.lock_account(v_account, false);
            -- New statements from here: a revocation that committed before the lock was granted is seen.
            UPDATE {schema}.codes SET redeemed_grant = p_grant, redeemed_at = p_now
                WHERE digest = p_code AND redeemed_grant IS NULL AND expires_at > p_now
                  AND NOT {schema}.account_revoked_since(v_account, v_issued);
            IF FOUND THEN
                PERFORM {schema}.insert_issuance(
                    p_grant, p_client, p_account, p_scope, p_created, p_expires,
                    p_current_refresh, p_session_pointer, NULL, NULL,
                    p_access, p_access_grant, p_access_issued, p_access_expires,
                    p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                    p_refresh_state, p_refresh_state_changed, p_refresh_successor,
                    p_session, p_session_grant, p_session_started, p_session_expires);
                outcome := 0;
                grant_id := p_grant;
                RETURN;
            END IF;
            SELECT c.redeemed_grant INTO grant_id FROM {schema}.codes c WHERE c.digest = p_code;
            outcome := CASE WHEN grant_id IS NOT NULL THEN 1 ELSE 2 END;
        END $$;

        -- Stores a grant made by another flow (GrantStore.createGrant), unless its account was revoked at
        -- or after p_authenticated, when its sign-in was authenticated. Outcome 0 created, 1 account revoked.
        CREATE FUNCTION {schema}.create_grant(
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea, p_revoked float8, p_reason text,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8,
            p_authenticated float8
        ) RETURNS smallint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            PERFORM {schema}.lock_account(p_account, false);
            IF {schema}.account_revoked_since(p_account, p_authenticated) THEN
                RETURN 1;
            END IF;
            PERFORM {schema}.insert_issuance(
                p_grant, p_client, p_account, p_scope, p_created, p_expires,
                p_current_refresh, p_session_pointer, p_revoked, p_reason,
                p_access, p_access_grant, p_access_issued, p_access_expires,
                p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                p_refresh_state, p_refresh_state_changed, p_refresh_successor,
                p_session, p_session_grant, p_session_started, p_session_expires);
            RETURN 0;
        END $$;

        -- Revokes an account (GrantStore.revokeGrants): records the revocation (a later one already
        -- recorded stays), removes the account's unredeemed codes and revokes its live grants, which it
        -- returns. Under the account's exclusive lock, so redemptions and creations are ordered with it.
        CREATE FUNCTION {schema}.revoke_account(p_account text, p_now float8, p_reason text)
        RETURNS SETOF {schema}.grants LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            PERFORM {schema}.lock_account(p_account, true);
            -- Codes before the revocation's row, the order removeExpired takes them in, so the two never
            -- wait for each other in a circle.
            DELETE FROM {schema}.codes WHERE account_id = p_account AND redeemed_grant IS NULL;
            INSERT INTO {schema}.account_revocations AS r VALUES (p_account, p_now)
                ON CONFLICT (account_id) DO UPDATE SET revoked_at = greatest(r.revoked_at, excluded.revoked_at);
            RETURN QUERY UPDATE {schema}.grants g SET revoked_at = p_now, revocation_reason = p_reason
                WHERE g.account_id = p_account AND g.revoked_at IS NULL AND g.expires_at > p_now
                RETURNING g.*;
        END $$;

        -- The records of account revocations no code issued before them can outlive (600 s, the longest
        -- code lifetime); GrantStore.removeExpired calls it beside version 1's remove_expired.
        CREATE FUNCTION {schema}.remove_expired_revocations(p_now float8) RETURNS bigint
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_count bigint;
        BEGIN
            DELETE FROM {schema}.account_revocations WHERE revoked_at + 600 <= p_now;
            GET DIAGNOSTICS v_count = ROW_COUNT;
            RETURN v_count;
        END $$;

        ALTER FUNCTION {schema}.remove_expired(float8) SET search_path = pg_catalog, pg_temp;
        ALTER FUNCTION {schema}.rotate_refresh_token(
            bytea, bytea, float8, bytea, uuid, float8, float8, bytea, uuid, float8, float8
        ) SET search_path = pg_catalog, pg_temp;
        ALTER FUNCTION {schema}.replace_session(uuid, float8, bytea, uuid, float8, float8)
            SET search_path = pg_catalog, pg_temp;
        """

    /// The same redemption as version 2's, in a form whose every statement on `codes` names only the key.
    ///
    /// Version 2's conditional `UPDATE … WHERE digest = p_code AND redeemed_grant IS NULL AND …` let the
    /// planner read it through a partial index whose predicate is `redeemed_grant IS NULL` — the small
    /// `codes_unredeemed_account` — and filter on the digest: every redemption scanned every pending code,
    /// about 70 µs with a thousand of them. Here the code's row is locked by its key (`FOR UPDATE`, after
    /// the account's lock as before, so a revocation cannot interleave and no deadlock forms), checked, and
    /// updated by its key; the row lock is the single-use guarantee: a concurrent redeemer waits for it and
    /// then reads the newest version, which is redeemed.
    ///
    /// The bodies of `lock_account`, `account_revoked_since` and `insert_issuance` are written in place:
    /// each call of a function with a `SET search_path` clause saves and restores the setting, and those
    /// three calls were a third of the function's server time. The advisory lock's key is the one
    /// `lock_account` computes, so a revocation (exclusive, in `revoke_account`) still excludes it.
    private static let version3 = """
        CREATE OR REPLACE FUNCTION {schema}.redeem_code(
            p_code bytea, p_now float8,
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8,
            OUT outcome smallint, OUT grant_id uuid
        ) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_account text;
            v_issued float8;
            v_expires float8;
        BEGIN
            SELECT c.account_id, c.issued_at INTO v_account, v_issued FROM {schema}.codes c WHERE c.digest = p_code;
            IF NOT FOUND THEN
                outcome := 2;
                RETURN;
            END IF;
            -- lock_account(v_account, false)
            PERFORM pg_advisory_xact_lock_shared(hashtext('tilecast-auth accounts'), hashtext('{schema}/' || v_account));
            -- New statements from here: a revocation that committed before the lock was granted is seen, and
            -- the row lock waits for a concurrent redemption, then reads what it left.
            SELECT c.redeemed_grant, c.expires_at INTO grant_id, v_expires
                FROM {schema}.codes c WHERE c.digest = p_code FOR UPDATE;
            IF NOT FOUND THEN
                outcome := 2;  -- removed meanwhile: by a revocation of the account, or as expired
                RETURN;
            ELSIF grant_id IS NOT NULL THEN
                outcome := 1;
                RETURN;
            ELSIF v_expires <= p_now OR EXISTS (SELECT 1 FROM {schema}.account_revocations r
                    WHERE r.account_id = v_account AND r.revoked_at >= v_issued) THEN
                outcome := 2;
                RETURN;
            END IF;
            UPDATE {schema}.codes SET redeemed_grant = p_grant, redeemed_at = p_now WHERE digest = p_code;
            -- insert_issuance: the grant and everything it starts with, in one statement.
            WITH new_grant AS (
                INSERT INTO {schema}.grants VALUES (
                    p_grant, p_client, p_account, p_scope, p_created, p_expires,
                    p_current_refresh, p_session_pointer, NULL, NULL)
            ), access AS (
                INSERT INTO {schema}.access_tokens
                    SELECT p_access, p_access_grant, p_access_issued, p_access_expires WHERE p_access IS NOT NULL
            ), refresh AS (
                INSERT INTO {schema}.refresh_tokens
                    SELECT p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                        p_refresh_state, p_refresh_state_changed, p_refresh_successor
                    WHERE p_refresh IS NOT NULL
            )
            INSERT INTO {schema}.sessions
                SELECT p_session, p_session_grant, p_session_started, p_session_expires WHERE p_session IS NOT NULL;
            outcome := 0;
            grant_id := p_grant;
        END $$;
        """

    /// The same rotation as version 1's, with the presented and the replaced token updated by two
    /// statements that each name one key.
    ///
    /// Version 1 updated both in one `UPDATE … WHERE digest = p_presented OR (digest = p_current AND
    /// p_presented <> p_current)`. Planned for the parameters' values — a plain rotation presents the
    /// current token, so the second arm is false — it is one lookup by the key; planned generically it is
    /// a scan of the table while it holds a few hundred tokens, a union of two lookups beyond. PostgreSQL
    /// kept the scan, reading every token on every rotation, and refused the union, planning the statement
    /// again on every call: 24 µs of each refresh in the benchmark's profile. Here each statement's generic plan is
    /// a lookup by the key, so the connection plans it a few times and then reuses it. What is written is
    /// unchanged: the presented token is rotated to the new successor (keeping its `rotatedAt` on a
    /// retry), and on a retry the successor it replaces is retired.
    ///
    /// A rotation also locks the presented token's row with the grant's before it writes: version 1's
    /// `UPDATE grants … FROM refresh_tokens` locked only the grant, and after waiting for that row
    /// PostgreSQL checked the grant again but used the token as read before the wait, so a rotation went
    /// ahead on a token `removeExpired` had taken meanwhile (the in-memory store answers `.notFound`). A
    /// retry requires the successor it replaces to be still stored, as `InMemoryGrantStore` does
    /// (`GrantStore.rotateRefreshToken`'s contract): it retires it by its key after the locks and goes on
    /// only if that found it. A plain rotation and a retry lock with separate statements, so the plain
    /// one's plan has none of the retry's conditions.
    ///
    /// `create_grant` gets what version 3 gave `redeem_code`: the bodies of `lock_account`,
    /// `account_revoked_since` and `insert_issuance` in place. `account_revoked_since` is a `LANGUAGE sql`
    /// function with a `SET` clause, which PostgreSQL never inlines, and PostgreSQL 15 keeps no plan of a
    /// SQL function's statement from one call to the next: its `EXISTS` was planned on every grant
    /// created. The advisory lock's key is `lock_account`'s, so a revocation still excludes a creation.
    ///
    /// `remove_expired_revocations` compared `revoked_at + 600 <= p_now`, which no index on `revoked_at`
    /// can answer. It now asks the index for `revoked_at <= p_now - 599` and keeps the exact comparison
    /// as a filter, so that what it removes is unchanged to the last bit.
    ///
    /// `remove_expired` locks each table's expired rows `FOR UPDATE SKIP LOCKED` and deletes those, so
    /// that maintenance never waits for a row a request holds. Waiting, it deadlocked with
    /// `revoke_account` (an account's codes deleted in another order) and with a rotation at its grant's
    /// last moment (the grant's row before its tokens'); what it skips goes on the next call. One
    /// instance prunes at a time (a transaction-scoped advisory lock, tried, never waited for): two would
    /// skip each other's rows and could still wait for each other through a grant's cascade. A grant
    /// whose redeemed code was skipped stays until the code goes. At NaN — which PostgreSQL sorts above
    /// every number, so that every expiry compared as past — both functions remove nothing.
    private static let version4 = """
        CREATE OR REPLACE FUNCTION {schema}.rotate_refresh_token(
            p_presented bytea, p_current bytea, p_now float8,
            p_successor bytea, p_successor_grant uuid, p_successor_issued float8, p_successor_expires float8,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8
        ) RETURNS smallint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_grant uuid;
            v_live boolean;
        BEGIN
            -- The grant's row and the presented token's, locked before anything is written. Locking the
            -- token too matters after a wait for the grant's row: PostgreSQL then reads the rows it locks
            -- again, as committed since, and a token removed meanwhile (removeExpired) is not found.
            IF p_presented = p_current THEN
                SELECT g.id INTO v_grant
                    FROM {schema}.grants g JOIN {schema}.refresh_tokens t ON g.id = t.grant_id
                    WHERE t.digest = p_presented
                      AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                    FOR NO KEY UPDATE OF g, t;
            ELSE
                -- A retry: the presented token must name the current one as its successor, and the current
                -- one, retired by its key, must still be stored.
                SELECT g.id INTO v_grant
                    FROM {schema}.grants g JOIN {schema}.refresh_tokens t ON g.id = t.grant_id
                    WHERE t.digest = p_presented
                      AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                      AND t.state = 1 AND t.successor = p_current
                    FOR NO KEY UPDATE OF g, t;
                IF FOUND THEN
                    UPDATE {schema}.refresh_tokens SET state = 2, state_changed_at = p_now, successor = NULL
                        WHERE digest = p_current;
                END IF;
            END IF;
            IF NOT FOUND THEN
                -- Nothing written; say why.
                SELECT t.grant_id, g.revoked_at IS NULL AND g.expires_at > p_now INTO v_grant, v_live
                    FROM {schema}.refresh_tokens t JOIN {schema}.grants g ON g.id = t.grant_id
                    WHERE t.digest = p_presented;
                IF NOT FOUND THEN
                    RETURN 1;
                ELSIF NOT v_live THEN
                    RETURN 2;
                END IF;
                RETURN 3;
            END IF;
            UPDATE {schema}.grants SET current_refresh_token = p_successor WHERE id = v_grant;
            -- The presented token now names the new successor, rotated now, or keeping its rotatedAt on a retry.
            UPDATE {schema}.refresh_tokens SET
                state = 1,
                state_changed_at = CASE WHEN p_presented = p_current THEN p_now ELSE state_changed_at END,
                successor = p_successor
                WHERE digest = p_presented;
            WITH successor AS (
                INSERT INTO {schema}.refresh_tokens
                    VALUES (p_successor, p_successor_grant, p_successor_issued, p_successor_expires, 0, NULL, NULL)
            )
            INSERT INTO {schema}.access_tokens VALUES (p_access, p_access_grant, p_access_issued, p_access_expires);
            RETURN 0;
        END $$;

        CREATE OR REPLACE FUNCTION {schema}.create_grant(
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea, p_revoked float8, p_reason text,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8,
            p_authenticated float8
        ) RETURNS smallint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            -- lock_account(p_account, false)
            PERFORM pg_advisory_xact_lock_shared(hashtext('tilecast-auth accounts'), hashtext('{schema}/' || p_account));
            -- account_revoked_since(p_account, p_authenticated)
            IF EXISTS (SELECT 1 FROM {schema}.account_revocations r
                    WHERE r.account_id = p_account AND r.revoked_at >= p_authenticated) THEN
                RETURN 1;
            END IF;
            -- insert_issuance: the grant and everything it starts with, in one statement.
            WITH new_grant AS (
                INSERT INTO {schema}.grants VALUES (
                    p_grant, p_client, p_account, p_scope, p_created, p_expires,
                    p_current_refresh, p_session_pointer, p_revoked, p_reason)
            ), access AS (
                INSERT INTO {schema}.access_tokens
                    SELECT p_access, p_access_grant, p_access_issued, p_access_expires WHERE p_access IS NOT NULL
            ), refresh AS (
                INSERT INTO {schema}.refresh_tokens
                    SELECT p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                        p_refresh_state, p_refresh_state_changed, p_refresh_successor
                    WHERE p_refresh IS NOT NULL
            )
            INSERT INTO {schema}.sessions
                SELECT p_session, p_session_grant, p_session_started, p_session_expires WHERE p_session IS NOT NULL;
            RETURN 0;
        END $$;

        -- Maintenance never waits for a row a request holds: each table's expired rows are locked with
        -- SKIP LOCKED and deleted; what is skipped goes on the next call. Waiting is how it deadlocked,
        -- with revoke_account (an account's codes in another order) and with a rotation across its
        -- grant's expiry (the grant's row before its tokens'). One instance prunes at a time: two would
        -- skip each other's rows and could still wait for each other through a grant's cascade, so
        -- while another holds the schema's maintenance lock this does nothing.
        CREATE OR REPLACE FUNCTION {schema}.remove_expired(p_now float8) RETURNS bigint
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_total bigint := 0;
            v_count bigint;
        BEGIN
            -- NaN sorts above every number here, so every row would be "expired" at it.
            IF p_now = 'NaN'::float8
                OR NOT pg_try_advisory_xact_lock(hashtext('tilecast-auth maintenance'), hashtext('{schema}')) THEN
                RETURN 0;
            END IF;
            DELETE FROM {schema}.codes WHERE digest IN (
                SELECT digest FROM {schema}.codes WHERE redeemed_grant IS NULL AND expires_at <= p_now
                FOR UPDATE SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.codes WHERE digest IN (
                SELECT c.digest FROM {schema}.codes c JOIN {schema}.grants g ON c.redeemed_grant = g.id
                WHERE g.expires_at <= p_now
                FOR UPDATE OF c SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.access_tokens WHERE digest IN (
                SELECT digest FROM {schema}.access_tokens WHERE expires_at <= p_now FOR UPDATE SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.refresh_tokens WHERE digest IN (
                SELECT digest FROM {schema}.refresh_tokens WHERE expires_at <= p_now FOR UPDATE SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.sessions WHERE digest IN (
                SELECT digest FROM {schema}.sessions WHERE expires_at <= p_now FOR UPDATE SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            -- A grant locked here is one no request holds; its remaining tokens and session go with it.
            -- One whose redeemed code was skipped above stays, so that both go on a later call: without
            -- its grant the code would never be joined to an expiry again.
            DELETE FROM {schema}.grants WHERE id IN (
                SELECT g.id FROM {schema}.grants g WHERE g.expires_at <= p_now
                  AND NOT EXISTS (SELECT 1 FROM {schema}.codes c WHERE c.redeemed_grant = g.id)
                FOR UPDATE SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            RETURN v_total + v_count;
        END $$;

        CREATE OR REPLACE FUNCTION {schema}.remove_expired_revocations(p_now float8) RETURNS bigint
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_count bigint;
        BEGIN
            -- The same lock as remove_expired's (held already when called beside it), and no waiting.
            IF p_now = 'NaN'::float8
                OR NOT pg_try_advisory_xact_lock(hashtext('tilecast-auth maintenance'), hashtext('{schema}')) THEN
                RETURN 0;
            END IF;
            DELETE FROM {schema}.account_revocations WHERE account_id IN (
                SELECT account_id FROM {schema}.account_revocations
                WHERE revoked_at <= p_now - 599 AND revoked_at + 600 <= p_now
                FOR UPDATE SKIP LOCKED);
            GET DIAGNOSTICS v_count = ROW_COUNT;
            RETURN v_count;
        END $$;
        """

    /// Version 5: the column in which each migration from this one on records the oldest library version
    /// whose statements still work against the database (``Migration/oldestCompatible``); and pruning
    /// whose work is what expired, not the size of the tables.
    ///
    /// Version 4's `remove_expired` deleted `WHERE digest IN (the expired rows, locked SKIP LOCKED)`.
    /// PostgreSQL plans that as a join of the table with the locked rows, and once a few percent of a
    /// table had expired it hashed them and read the whole table: 64 ms to delete 2,400 of 200,000
    /// access tokens, growing with the table. Each statement now deletes the rows where it locked them —
    /// `ctid = ANY(ARRAY(…))`, a lookup by row address — 5.5 ms for the same. A locked row cannot move or
    /// go before the transaction ends, so its address is the row; one updated just before it was locked is
    /// at an address the statement does not see, and is left for the next call, as a skipped one is.
    ///
    /// A grant whose redeemed code is still there is kept (it goes with the code, on a later call); the
    /// check asks the code's index per expired grant, which is what expired, not the table of codes.
    ///
    /// Signatures and results are unchanged, and version 4's statements never read the new column, so
    /// version 4 keeps working.
    private static let version5 = """
        ALTER TABLE {schema}.schema_migrations ADD COLUMN oldest_compatible integer
            CHECK (oldest_compatible >= 1 AND oldest_compatible <= version);

        CREATE OR REPLACE FUNCTION {schema}.remove_expired(p_now float8) RETURNS bigint
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_total bigint := 0;
            v_count bigint;
        BEGIN
            -- NaN sorts above every number here, so every row would be "expired" at it.
            IF p_now = 'NaN'::float8
                OR NOT pg_try_advisory_xact_lock(hashtext('tilecast-auth maintenance'), hashtext('{schema}')) THEN
                RETURN 0;
            END IF;
            DELETE FROM {schema}.codes WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM {schema}.codes WHERE redeemed_grant IS NULL AND expires_at <= p_now
                FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            -- Per expired grant, its codes through their index: as a join, PostgreSQL may hash every code.
            DELETE FROM {schema}.codes WHERE ctid = ANY(ARRAY(
                SELECT c.ctid FROM {schema}.grants g
                    CROSS JOIN LATERAL (
                        SELECT c.ctid FROM {schema}.codes c WHERE c.redeemed_grant = g.id
                        FOR UPDATE SKIP LOCKED) c
                WHERE g.expires_at <= p_now));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.access_tokens WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM {schema}.access_tokens WHERE expires_at <= p_now FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.refresh_tokens WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM {schema}.refresh_tokens WHERE expires_at <= p_now FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            DELETE FROM {schema}.sessions WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM {schema}.sessions WHERE expires_at <= p_now FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            v_total := v_total + v_count;
            -- A grant locked here is one no request holds; its remaining tokens and session go with it.
            -- One whose redeemed code was skipped above stays, so that both go on a later call: without
            -- its grant the code would never be joined to an expiry again. OFFSET 0 keeps the check a
            -- lookup per expired grant: as an anti-join, PostgreSQL may hash every code.
            DELETE FROM {schema}.grants WHERE ctid = ANY(ARRAY(
                SELECT g.ctid FROM {schema}.grants g WHERE g.expires_at <= p_now
                  AND NOT EXISTS (SELECT 1 FROM {schema}.codes c WHERE c.redeemed_grant = g.id OFFSET 0)
                FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            RETURN v_total + v_count;
        END $$;

        CREATE OR REPLACE FUNCTION {schema}.remove_expired_revocations(p_now float8) RETURNS bigint
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_count bigint;
        BEGIN
            -- The same lock as remove_expired's (held already when called beside it), and no waiting.
            IF p_now = 'NaN'::float8
                OR NOT pg_try_advisory_xact_lock(hashtext('tilecast-auth maintenance'), hashtext('{schema}')) THEN
                RETURN 0;
            END IF;
            DELETE FROM {schema}.account_revocations WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM {schema}.account_revocations
                WHERE revoked_at <= p_now - 599 AND revoked_at + 600 <= p_now
                FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS v_count = ROW_COUNT;
            RETURN v_count;
        END $$;
        """

    /// Version 6: `rotate_refresh_token_starting_session`, a refresh's rotation and the Studio session it
    /// starts in one transaction (`GrantStore.rotateRefreshToken(_:replacing:successor:accessToken:startingSession:at:)`).
    ///
    /// A refresh with `studio_session: true` was two calls, `rotate_refresh_token` then `replace_session`:
    /// two round trips and two commits, each waiting for the WAL flush. This function makes the same two
    /// calls in one: the session starts only if the rotation rotated, with the grant's row still locked by
    /// it, so the grant is live and the session starts. Its outcomes are `rotate_refresh_token`'s. A session
    /// for another grant than the successor's is refused as not found, before anything is written.
    ///
    /// It only adds a function, so versions 4 and 5 keep working.
    private static let version6 = """
        CREATE FUNCTION {schema}.rotate_refresh_token_starting_session(
            p_presented bytea, p_current bytea, p_now float8,
            p_successor bytea, p_successor_grant uuid, p_successor_issued float8, p_successor_expires float8,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8
        ) RETURNS smallint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_outcome smallint;
            v_session smallint;
        BEGIN
            IF p_session_grant IS DISTINCT FROM p_successor_grant THEN
                RETURN 1;  -- a session for another grant: refused as not found, as in memory
            END IF;
            v_outcome := {schema}.rotate_refresh_token(
                p_presented, p_current, p_now,
                p_successor, p_successor_grant, p_successor_issued, p_successor_expires,
                p_access, p_access_grant, p_access_issued, p_access_expires);
            IF v_outcome <> 0 THEN
                RETURN v_outcome;
            END IF;
            SELECT r.outcome INTO v_session FROM {schema}.replace_session(
                p_session_grant, p_now, p_session, p_session_grant, p_session_started, p_session_expires) r;
            IF v_session IS DISTINCT FROM 0 THEN
                -- The rotation holds the grant's row and found it live: this cannot happen.
                RAISE EXCEPTION 'rotate_refresh_token_starting_session: the grant stopped being live';
            END IF;
            RETURN 0;
        END $$;
        """

    /// Version 7: a redemption's writes, and a rotation's, each in one statement.
    ///
    /// Every statement a PL/pgSQL function runs pays the executor's start and end, a snapshot and its
    /// bookkeeping, whatever it writes. `redeem_code` marked the code redeemed in one statement and
    /// inserted the grant, its tokens and its session in another, and checked the account's revocation
    /// in a third (an `IF … EXISTS` is a query of its own); `rotate_refresh_token` updated the grant, then
    /// the presented token, then inserted the successor and the access token. Here the writes of each are
    /// one statement of data-modifying `WITH` clauses, and the revocation check is read with the code's
    /// row lock. What is locked and written, and in which order the locks are taken, is unchanged: the
    /// rows each statement writes were locked by the statements before it, so the single snapshot of one
    /// statement sees what the several did. The revocation check now reads the snapshot taken once the
    /// account's lock is held, before any wait for the code's row: no revocation can be added meanwhile
    /// (that takes the account's lock exclusively), and one that `remove_expired_revocations` removes
    /// meanwhile still refuses the code, as the in-memory store does — version 3 read the revocations again
    /// after the wait and redeemed it (found by a review; `PostgresOperationsTests`).
    ///
    /// `rotate_refresh_token_starting_session` is written in place of its calls of `rotate_refresh_token`
    /// and `replace_session` (each call of a function with a `SET` clause saves and restores the setting):
    /// the rotation's locking read also reads the grant's current session, and every write is one
    /// statement on the rows that lock holds. It also refuses, as not found and before any other refusal,
    /// a session, successor or access token of another grant than the presented token's: version 6 rotated
    /// on one grant and started the session on the other (the store kit checks it). Signatures and results are unchanged, so versions 4 to 6 keep
    /// working.
    private static let version7 = """
        CREATE OR REPLACE FUNCTION {schema}.redeem_code(
            p_code bytea, p_now float8,
            p_grant uuid, p_client text, p_account text, p_scope text, p_created float8, p_expires float8,
            p_current_refresh bytea, p_session_pointer bytea,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_refresh bytea, p_refresh_grant uuid, p_refresh_issued float8, p_refresh_expires float8,
            p_refresh_state smallint, p_refresh_state_changed float8, p_refresh_successor bytea,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8,
            OUT outcome smallint, OUT grant_id uuid
        ) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_account text;
            v_issued float8;
            v_expires float8;
            v_revoked boolean;
        BEGIN
            SELECT c.account_id, c.issued_at INTO v_account, v_issued FROM {schema}.codes c WHERE c.digest = p_code;
            IF NOT FOUND THEN
                outcome := 2;
                RETURN;
            END IF;
            -- lock_account(v_account, false)
            PERFORM pg_advisory_xact_lock_shared(hashtext('tilecast-auth accounts'), hashtext('{schema}/' || v_account));
            -- New statements from here: a revocation that committed before the lock was granted is seen, and
            -- the row lock waits for a concurrent redemption, then reads what it left.
            SELECT c.redeemed_grant, c.expires_at,
                    EXISTS (SELECT 1 FROM {schema}.account_revocations r
                        WHERE r.account_id = v_account AND r.revoked_at >= v_issued)
                INTO grant_id, v_expires, v_revoked
                FROM {schema}.codes c WHERE c.digest = p_code FOR UPDATE OF c;
            IF NOT FOUND THEN
                outcome := 2;  -- removed meanwhile: by a revocation of the account, or as expired
                RETURN;
            ELSIF grant_id IS NOT NULL THEN
                outcome := 1;
                RETURN;
            ELSIF v_expires <= p_now OR v_revoked THEN
                outcome := 2;
                RETURN;
            END IF;
            -- The code redeemed, and the grant and everything it starts with, in one statement.
            WITH redeemed AS (
                UPDATE {schema}.codes SET redeemed_grant = p_grant, redeemed_at = p_now WHERE digest = p_code
            ), new_grant AS (
                INSERT INTO {schema}.grants VALUES (
                    p_grant, p_client, p_account, p_scope, p_created, p_expires,
                    p_current_refresh, p_session_pointer, NULL, NULL)
            ), access AS (
                INSERT INTO {schema}.access_tokens
                    SELECT p_access, p_access_grant, p_access_issued, p_access_expires WHERE p_access IS NOT NULL
            ), refresh AS (
                INSERT INTO {schema}.refresh_tokens
                    SELECT p_refresh, p_refresh_grant, p_refresh_issued, p_refresh_expires,
                        p_refresh_state, p_refresh_state_changed, p_refresh_successor
                    WHERE p_refresh IS NOT NULL
            )
            INSERT INTO {schema}.sessions
                SELECT p_session, p_session_grant, p_session_started, p_session_expires WHERE p_session IS NOT NULL;
            outcome := 0;
            grant_id := p_grant;
        END $$;

        CREATE OR REPLACE FUNCTION {schema}.rotate_refresh_token(
            p_presented bytea, p_current bytea, p_now float8,
            p_successor bytea, p_successor_grant uuid, p_successor_issued float8, p_successor_expires float8,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8
        ) RETURNS smallint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_grant uuid;
            v_live boolean;
        BEGIN
            -- The grant's row and the presented token's, locked before anything is written (version 4).
            IF p_presented = p_current THEN
                SELECT g.id INTO v_grant
                    FROM {schema}.grants g JOIN {schema}.refresh_tokens t ON g.id = t.grant_id
                    WHERE t.digest = p_presented
                      AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                    FOR NO KEY UPDATE OF g, t;
            ELSE
                -- A retry: the presented token must name the current one as its successor, and the current
                -- one, retired by its key, must still be stored.
                SELECT g.id INTO v_grant
                    FROM {schema}.grants g JOIN {schema}.refresh_tokens t ON g.id = t.grant_id
                    WHERE t.digest = p_presented
                      AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                      AND t.state = 1 AND t.successor = p_current
                    FOR NO KEY UPDATE OF g, t;
                IF FOUND THEN
                    UPDATE {schema}.refresh_tokens SET state = 2, state_changed_at = p_now, successor = NULL
                        WHERE digest = p_current;
                END IF;
            END IF;
            IF NOT FOUND THEN
                -- Nothing written; say why.
                SELECT t.grant_id, g.revoked_at IS NULL AND g.expires_at > p_now INTO v_grant, v_live
                    FROM {schema}.refresh_tokens t JOIN {schema}.grants g ON g.id = t.grant_id
                    WHERE t.digest = p_presented;
                IF NOT FOUND THEN
                    RETURN 1;
                ELSIF NOT v_live THEN
                    RETURN 2;
                END IF;
                RETURN 3;
            END IF;
            -- The grant's current token, the presented token (rotated now, or keeping its rotatedAt on a
            -- retry) naming the successor, the successor and the access token: one statement.
            WITH current_token AS (
                UPDATE {schema}.grants SET current_refresh_token = p_successor WHERE id = v_grant
            ), presented AS (
                UPDATE {schema}.refresh_tokens SET
                    state = 1,
                    state_changed_at = CASE WHEN p_presented = p_current THEN p_now ELSE state_changed_at END,
                    successor = p_successor
                    WHERE digest = p_presented
            ), successor AS (
                INSERT INTO {schema}.refresh_tokens
                    VALUES (p_successor, p_successor_grant, p_successor_issued, p_successor_expires, 0, NULL, NULL)
            )
            INSERT INTO {schema}.access_tokens VALUES (p_access, p_access_grant, p_access_issued, p_access_expires);
            RETURN 0;
        END $$;

        -- The rotation and the session's start, written in place rather than as calls of the two functions
        -- (each call of a function with a SET clause saves and restores the setting): the same locks, the
        -- grant's previous session read with its row, and every write in one statement.
        CREATE OR REPLACE FUNCTION {schema}.rotate_refresh_token_starting_session(
            p_presented bytea, p_current bytea, p_now float8,
            p_successor bytea, p_successor_grant uuid, p_successor_issued float8, p_successor_expires float8,
            p_access bytea, p_access_grant uuid, p_access_issued float8, p_access_expires float8,
            p_session bytea, p_session_grant uuid, p_session_started float8, p_session_expires float8
        ) RETURNS smallint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            v_grant uuid;
            v_live boolean;
            v_previous bytea;
        BEGIN
            IF p_session_grant IS DISTINCT FROM p_successor_grant
                    OR p_access_grant IS DISTINCT FROM p_successor_grant THEN
                RETURN 1;  -- a session or access token for another grant: refused as not found, as in memory
            END IF;
            IF p_presented = p_current THEN
                SELECT g.id, g.session INTO v_grant, v_previous
                    FROM {schema}.grants g JOIN {schema}.refresh_tokens t ON g.id = t.grant_id
                    WHERE t.digest = p_presented
                      AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                    FOR NO KEY UPDATE OF g, t;
            ELSE
                SELECT g.id, g.session INTO v_grant, v_previous
                    FROM {schema}.grants g JOIN {schema}.refresh_tokens t ON g.id = t.grant_id
                    WHERE t.digest = p_presented
                      AND g.revoked_at IS NULL AND g.expires_at > p_now AND g.current_refresh_token = p_current
                      AND t.state = 1 AND t.successor = p_current
                    FOR NO KEY UPDATE OF g, t;
            END IF;
            IF FOUND AND v_grant IS DISTINCT FROM p_session_grant THEN
                RETURN 1;  -- the presented token's grant is not the session's: nothing written
            END IF;
            IF FOUND AND p_presented <> p_current THEN
                UPDATE {schema}.refresh_tokens SET state = 2, state_changed_at = p_now, successor = NULL
                    WHERE digest = p_current;
            END IF;
            IF NOT FOUND THEN
                -- Nothing written; say why. What names another grant than the token's is not found first.
                SELECT t.grant_id, g.revoked_at IS NULL AND g.expires_at > p_now INTO v_grant, v_live
                    FROM {schema}.refresh_tokens t JOIN {schema}.grants g ON g.id = t.grant_id
                    WHERE t.digest = p_presented;
                IF NOT FOUND OR v_grant IS DISTINCT FROM p_session_grant THEN
                    RETURN 1;
                ELSIF NOT v_live THEN
                    RETURN 2;
                END IF;
                RETURN 3;
            END IF;
            WITH current_token AS (
                UPDATE {schema}.grants SET current_refresh_token = p_successor, session = p_session WHERE id = v_grant
            ), presented AS (
                UPDATE {schema}.refresh_tokens SET
                    state = 1,
                    state_changed_at = CASE WHEN p_presented = p_current THEN p_now ELSE state_changed_at END,
                    successor = p_successor
                    WHERE digest = p_presented
            ), successor AS (
                INSERT INTO {schema}.refresh_tokens
                    VALUES (p_successor, p_successor_grant, p_successor_issued, p_successor_expires, 0, NULL, NULL)
            ), access AS (
                INSERT INTO {schema}.access_tokens VALUES (p_access, p_access_grant, p_access_issued, p_access_expires)
            ), ended AS (
                DELETE FROM {schema}.sessions s WHERE s.digest = v_previous
            )
            INSERT INTO {schema}.sessions VALUES (p_session, p_session_grant, p_session_started, p_session_expires);
            RETURN 0;
        END $$;
        """

    /// Version 8: a digest's length and a refresh token's state checked by domains rather than by their
    /// tables' `CHECK` constraints.
    ///
    /// PostgreSQL 15 reads a table's `CHECK` constraints from their stored text and plans them again for
    /// every statement that writes the table (`ExecRelCheck` calls `stringToNode` and `ExecPrepareExpr`
    /// for each, once per statement and table written), where a domain's check is kept parsed in the type
    /// cache. A rotation writes the grants and, twice, the refresh tokens: fourteen checks prepared per
    /// call, 18 % of the backend's time in a loop of rotations (`perf`), and a rotation with the
    /// single-column checks moved to domains took 111.5 µs of server time against 127.0 (the medians of
    /// sixteen runs of 3,000 rotations, each committed, the two schemas alternating). The columns keep
    /// every rule they had: each digest is 32 bytes (`sha256_digest`), each refresh token's state is 0, 1
    /// or 2 (`refresh_token_state`); the rules across columns stay table constraints.
    ///
    /// The domains are created without their checks, so that changing a column's type to one is binary
    /// and rewrites neither the table nor its indexes (a domain with a check would rewrite both, holding
    /// every table's exclusive lock for as long); the checks are added after, `NOT VALID`, and apply to
    /// every value written from then on. The rows already stored were checked by the table constraints
    /// this migration drops in the same transaction. A column of a domain is sent to clients as its base
    /// type, and statements written for `bytea` and `smallint` are unchanged, but PostgreSQL refuses a
    /// statement prepared before the change that returns one of these columns ("cached plan must not
    /// change result type"), on every call until it is prepared again, which versions before 8 never do:
    /// this migration needs its own version, so instances of earlier versions stop before it is applied.
    /// From version 8 on a connection prepares such a statement again (``PostgresConnection``).
    ///
    /// Changing a column's type takes its table's exclusive lock, which waits for every transaction using
    /// the table while every later request waits behind it, holding the tables already changed; and the
    /// store's refresh-token lookup takes its tables in another order than the migration, so the two could
    /// deadlock. Each lock is waited for at most two seconds past `deadlock_timeout` (`lock_timeout`; past
    /// `deadlock_timeout` the server cancels an autovacuum that holds the table, so one never makes the
    /// migration give up): a session that holds a table — a long report, `pg_dump` — makes
    /// ``PostgresGrantStore/migrate()`` throw `lock_not_available` (55P03) with nothing changed, rather than
    /// queue every request behind it, and a deadlock ends at the timeout with the migration the side that
    /// gives up, if the server's detector has not ended it first.
    private static let version8 = """
        -- Each lock waited for at most two seconds past deadlock_timeout, after which an autovacuum holding
        -- the table is cancelled for it.
        SELECT set_config('lock_timeout',
            (ceil(extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000) + 2000)::bigint::text, true);
        CREATE DOMAIN {schema}.sha256_digest AS bytea;
        CREATE DOMAIN {schema}.refresh_token_state AS smallint;
        ALTER TABLE {schema}.codes
            DROP CONSTRAINT codes_digest_check,
            ALTER COLUMN digest TYPE {schema}.sha256_digest;
        ALTER TABLE {schema}.grants
            DROP CONSTRAINT grants_current_refresh_token_check,
            DROP CONSTRAINT grants_session_check,
            ALTER COLUMN current_refresh_token TYPE {schema}.sha256_digest,
            ALTER COLUMN session TYPE {schema}.sha256_digest;
        ALTER TABLE {schema}.refresh_tokens
            DROP CONSTRAINT refresh_tokens_digest_check,
            DROP CONSTRAINT refresh_tokens_successor_check,
            DROP CONSTRAINT refresh_tokens_state_check,
            ALTER COLUMN digest TYPE {schema}.sha256_digest,
            ALTER COLUMN successor TYPE {schema}.sha256_digest,
            ALTER COLUMN state TYPE {schema}.refresh_token_state;
        ALTER TABLE {schema}.access_tokens
            DROP CONSTRAINT access_tokens_digest_check,
            ALTER COLUMN digest TYPE {schema}.sha256_digest;
        ALTER TABLE {schema}.sessions
            DROP CONSTRAINT sessions_digest_check,
            ALTER COLUMN digest TYPE {schema}.sha256_digest;
        ALTER DOMAIN {schema}.sha256_digest
            ADD CONSTRAINT sha256_digest_length CHECK (octet_length(VALUE) = 32) NOT VALID;
        ALTER DOMAIN {schema}.refresh_token_state
            ADD CONSTRAINT refresh_token_state_known CHECK (VALUE IN (0, 1, 2)) NOT VALID;
        SET LOCAL lock_timeout TO DEFAULT;
        """

    /// Version 9: how many attempts an admission granted, so that a `PostgresRateLimiter` instance can ask
    /// for a lease of several in one round trip and learn how many it got (PostgreSQL 15's `RETURNING`
    /// sees only the row as updated, never the tokens it held before). A column with a constant default is
    /// added to the catalog alone, without rewriting the table; version 8's statements never name it, so
    /// it keeps them working.
    private static let version9 = """
        SELECT set_config('lock_timeout',
            (ceil(extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000) + 2000)::bigint::text, true);
        ALTER TABLE {schema}.rate_limits ADD COLUMN granted integer NOT NULL DEFAULT 1;
        SET LOCAL lock_timeout TO DEFAULT;
        """
}
#endif
