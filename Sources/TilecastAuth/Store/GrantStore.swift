// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Where codes, grants, refresh tokens, access tokens and Studio sessions live.
///
/// The protocol is small on purpose: each requirement is **one atomic operation**, and every state change
/// that must happen once returns an outcome instead of `Void`, so the engine learns — from the same
/// operation that made the change — whether it won. There is no transaction API to discover at run time:
/// the atomic operations *are* the contract (compare fosite's `MaybeBeginTx`, which silently did
/// nothing when a store had no transactions).
///
/// The store only ever receives ``SecretDigest``s, never a code, token or session id.
///
/// The outcomes — ``CodeRedemption``, ``GrantCreation``, ``RefreshRotation``, ``SessionReplacement``,
/// ``GrantRevocation`` — are enums on purpose, unlike the library's error and event types: each is a
/// closed set that is part of this contract, and a new outcome would be a new contract that every store
/// must implement, so a `switch` that stops compiling is what a store's author should see.
///
/// ## Atomicity
/// An operation documented as atomic must behave as if no other operation ran during it: under any
/// number of concurrent callers, the outcome each caller sees is one some serial order would give. In
/// PostgreSQL each is one transaction or one conditional `UPDATE … RETURNING`; in memory, one critical
/// section without a suspension point.
///
/// ## Reads
/// Reads return records as stored, including expired and revoked ones that have not been removed yet;
/// the engine decides validity against its own clock. A store may drop a record once it has expired
/// (see ``removeExpired(at:)``), and must keep a redeemed code until its grant expires and a rotated
/// refresh token until its own ``RefreshToken/expiresAt``, so replays and reuse can be detected.
///
/// ## Errors
/// `throws` means infrastructure failure — the database is down, a connection dropped — or a key already
/// stored (below), never a protocol outcome. An operation that throws must have written nothing (or everything: the engine cannot tell
/// the difference, so a store must make sure it is nothing). The engine answers a throw during a request
/// with a 503; from ``AuthEngine``'s own calls (issuing a code, creating a grant) the error reaches the
/// caller. An error that can say the store was unavailable — nothing of the operation sent, and no other
/// operation possible then — conforms to ``BackendAvailabilityError``, which spares a remembered record's
/// write the read that would otherwise decide its answer.
///
/// ## Keys
/// Every key a write names — a code's, token's or session's digest, a grant's id — is a fresh random
/// value, so one that a stored record already has is a caller's mistake (or a broken random source).
/// A write that would store it throws, having written nothing, where it would otherwise write (after the
/// refusals its outcome reports); it never replaces the stored record, which would hand another grant's
/// code, token or session to this one. PostgreSQL's unique keys do this; ``InMemoryGrantStore`` throws
/// an ``InMemoryGrantStoreError``. "Stored" is as the store stands: a record already expired may have been
/// removed by one store and not yet by another, so a key reused after its record expired may be refused
/// by one and accepted by the other.
///
/// ## Remembered records
/// A store whose reads cost a round trip may remember the codes and refresh tokens it wrote itself and
/// answer ``rememberedAuthorizationCode(_:)`` and ``rememberedRefreshToken(_:)`` from memory, with no
/// I/O. What it remembers may be stale — another instance may have redeemed, rotated or revoked since —
/// and the engine treats it so: it goes forward on a remembered record only as far as the atomic write,
/// which checks again everything that can change, and decides every refusal, revocation and failure on a
/// record read with ``authorizationCode(_:)`` or ``refreshToken(_:)``. The fields that never change
/// after a write (a code's client, redirect URI, challenge, account, scope and expiry; a token's grant,
/// expiry and the grant's client, scope and expiry) must be remembered as written.
public protocol GrantStore: Sendable {
    /// The registered client with this identifier.
    func client(_ id: ClientID) async throws -> Client?

    /// Stores a newly issued authorization code.
    ///
    /// The digest is of a fresh 256-bit secret, so no other writer can race for it; the operation
    /// returns nothing because there is no outcome to report.
    func insertCode(_ code: AuthorizationCode) async throws

    /// The authorization code with this digest, redeemed or not.
    func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode?

    /// The authorization code with this digest as this store wrote it, if it remembers it; `nil`
    /// otherwise, and by default. No I/O: see "Remembered records" above.
    func rememberedAuthorizationCode(_ digest: SecretDigest) -> AuthorizationCode?

    /// Redeems a code and stores everything the new grant starts with — atomically.
    ///
    /// - Important: If the code exists, has no ``AuthorizationCode/redemption`` and `now` is before its
    ///   ``AuthorizationCode/expiresAt``, mark it redeemed into `issuance.grant.id` at `now` and store
    ///   the grant, its tokens and its session, all in the same atomic step, then return `.redeemed`.
    ///   If it was already redeemed return `.alreadyRedeemed` with the grant it became; if it does not
    ///   exist, has expired, or was issued at or before its account's last revocation
    ///   (``revokeGrants(of:reason:at:)``) return `.notFound`. In every refusal write nothing. Of any
    ///   number of concurrent calls for one code, exactly one may return `.redeemed` (RFC 6749 §4.1.2,
    ///   OAuth 2.1 §4.1.3: "return an access token only once for a given authorization code").
    func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws -> CodeRedemption

    /// Stores a grant that did not come from a code exchange at this endpoint — one the embedding
    /// server's other flows create, for `tilecast-web` or `tilecast-cli` say — atomically.
    ///
    /// - Important: If the grant's account was revoked (``revokeGrants(of:reason:at:)``) at or after the
    ///   issuance's ``GrantIssuance/authenticatedAt``, write nothing and return `.accountRevoked`: the
    ///   sign-in was authenticated before the revocation. Otherwise store the grant, its tokens and its
    ///   session and return `.created`. The grant id and every digest are fresh random values, so no other
    ///   writer can race for them.
    func createGrant(_ issuance: GrantIssuance) async throws -> GrantCreation

    /// The refresh token with this digest and its grant, in whatever state they are.
    func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup?

    /// The refresh token with this digest and its grant as this store last wrote them, if it remembers
    /// them; `nil` otherwise, and by default. No I/O: see "Remembered records" above.
    func rememberedRefreshToken(_ digest: SecretDigest) -> RefreshTokenLookup?

    /// Rotates a grant's refresh token: a compare-and-set on the grant's current token — atomically.
    ///
    /// - Important: Look up the token `presented` and its grant. If there is none return `.notFound`; if
    ///   the grant is revoked or `now` is not before its ``Grant/expiresAt`` return `.grantNotLive`; if
    ///   the grant's ``Grant/currentRefreshToken`` is not `current` return `.superseded` with the
    ///   token and grant as they stand. Otherwise, in one atomic step:
    ///   - when `presented == current` (an ordinary rotation), set the presented token's state to
    ///     `.rotated(rotatedAt: now, successor: successor.digest)`;
    ///   - when `presented != current` (a retry within the configured leeway), require the presented
    ///     token's state to be `.rotated(_, successor: current)` and `current` to be still stored (not
    ///     removed as expired) — else return `.superseded` — then set
    ///     its successor to `successor.digest`, keeping its `rotatedAt`, and set the state of `current`
    ///     to `.retired(retiredAt: now)`;
    ///
    ///   and in both cases store `successor` and `accessToken` and make `successor.digest` the grant's
    ///   current token. Return `.rotated`. In every refusal write nothing. Of any number of concurrent
    ///   calls naming the same `current`, exactly one may return `.rotated` (RFC 9700 §4.14.2).
    func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation

    /// Rotates a grant's refresh token and starts its new Studio session — atomically — or answers `nil`
    /// for a store that starts sessions separately.
    ///
    /// A refresh that asks for a Studio session (`studio_session: true`) calls this first. A store that
    /// answers `nil` has written nothing. The engine then makes the two calls the default implementation
    /// stands for: ``rotateRefreshToken(_:replacing:successor:accessToken:at:)`` and, if that rotated,
    /// ``replaceSession(of:with:at:)``. Implementing it saves one of those operations per refresh: for a
    /// database, a round trip and a commit.
    ///
    /// - Important: `session.grant` is the grant of `successor` and `accessToken`: the grant of the
    ///   presented token (answer `.notFound` otherwise, writing nothing). Refuse, write and answer as ``rotateRefreshToken(_:replacing:successor:accessToken:at:)``
    ///   does. When that rotates, in the same atomic step also end the grant's current session (if any)
    ///   so that it no longer authenticates, store `session`, and make it the grant's ``Grant/session``,
    ///   as ``replaceSession(of:with:at:)`` does. The rotation found the grant live, so the session
    ///   starts. Then answer `.rotated`. In every other answer, and when it throws, write nothing: the
    ///   token is not rotated unless the session starts with it.
    ///
    /// With two calls, the session can fail to start after the rotation — a backend failure, or the grant
    /// revoked in between — and the endpoint answers with the rotated credential, `authenticated: false`
    /// and no cookie. With this operation either both happen or neither: a failure is a 503 with nothing
    /// written, and the same refresh token works on the next attempt.
    func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation?

    /// Starts a grant's new Studio session, ending the one it replaces — atomically.
    ///
    /// - Important: If the grant exists, is not revoked and `now` is before its ``Grant/expiresAt``,
    ///   end its current session (if any) so that it no longer authenticates, store `session` and make
    ///   it the grant's ``Grant/session``, and return `.replaced` with the digest of the session it
    ///   ended. Otherwise write nothing and return `.grantNotLive`. A grant never has two live sessions.
    func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws -> SessionReplacement

    /// Revokes a grant with everything hanging off it — atomically.
    ///
    /// - Important: If the grant exists, is unrevoked and `now` is before its ``Grant/expiresAt``, set
    ///   its ``Grant/revocation`` to `(now, reason)` and return `.revoked`. From then on no access
    ///   token, refresh token or session of the grant may authenticate or rotate: lookups may still
    ///   return them, with the revoked grant, and every write checks the grant first. If the grant is
    ///   already revoked return `.alreadyRevoked`; if it does not exist or has expired return
    ///   `.notFound`. In both refusals write nothing (RFC 7009 §2.1).
    func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation

    /// Revokes every live grant of an account and every code it has not redeemed — atomically, so that
    /// no grant of the account escapes the revocation by being created or used while it runs (RFC 9700
    /// §4.14.2: a password change must end what the old password let in).
    ///
    /// - Important: In one atomic step:
    ///   - record that the account was revoked at `now` (a later time already recorded stays): from then
    ///     on ``redeemCode(_:issuing:at:)`` refuses every code of the account issued at or before that
    ///     time, and ``createGrant(_:)`` every grant of the account whose sign-in was authenticated at or
    ///     before it — a sign-in that was under way when the revocation ran never completes after it;
    ///   - remove every unredeemed code of the account, whatever its issue time (so a code stored by an
    ///     instance whose clock runs ahead is ended too);
    ///   - set ``Grant/revocation`` to `(now, reason)` on every grant of the account that is unrevoked and
    ///     not past its ``Grant/expiresAt``, and return those grants as revoked. Grants already revoked
    ///     or expired are left as they are.
    ///
    ///   A redemption or creation running concurrently must be ordered with the revocation: either it
    ///   completes first, and its grant is among those revoked, or it comes after, and is refused. The
    ///   record of the revocation may be removed once no code issued before it can still be redeemed:
    ///   ``removeExpired(at:)`` may drop it ``TokenLifetimes/maximumAuthorizationCode`` after `now`.
    func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant]

    /// The access token with this digest and its grant.
    func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup?

    /// The Studio session with this digest and its grant; `nil` once the session was replaced.
    func session(_ digest: SecretDigest) async throws -> SessionLookup?

    /// The grant with this id.
    func grant(_ id: GrantID) async throws -> Grant?

    /// Every stored grant of an account, revoked ones included, oldest first.
    func grants(of account: AccountID) async throws -> [Grant]

    /// Removes records that can no longer matter at `now`, and returns how many it removed.
    ///
    /// A record may be removed once `now` is at or after its expiry — for a redeemed code, its grant's
    /// expiry. Removing an expired record must never change an answer the engine gives.
    func removeExpired(at now: Date) async throws -> Int
}

extension GrantStore {
    /// Answers `nil`: this store remembers nothing, and every code is read from it.
    public func rememberedAuthorizationCode(_ digest: SecretDigest) -> AuthorizationCode? {
        nil
    }

    /// Answers `nil`: this store remembers nothing, and every refresh token is read from it.
    public func rememberedRefreshToken(_ digest: SecretDigest) -> RefreshTokenLookup? {
        nil
    }

    /// Answers `nil`: this store starts a refresh's Studio session separately, with
    /// ``replaceSession(of:with:at:)`` after ``rotateRefreshToken(_:replacing:successor:accessToken:at:)``.
    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        nil
    }
}
