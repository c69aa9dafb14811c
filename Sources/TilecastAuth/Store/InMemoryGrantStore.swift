// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The embedded default ``GrantStore``: every record in process memory, every operation atomic.
///
/// Each operation runs entirely inside one lock with no suspension point, so it is atomic under any
/// number of concurrent tasks — unlike fosite's in-memory store, whose transactions are documented as
/// doing nothing. Writes also remove a few due records on their way out, so memory follows the live set
/// of codes, grants, tokens and sessions instead of growing with every exchange; ``removeExpired(at:)``
/// removes everything due at once.
///
/// Records keep one copy of the strings they hold alike — the registered client's id and redirect URI,
/// and scopes, through a pool of 64 scopes of up to 256 bytes that keeps those used often — in place of the
/// copies the caller passed, where the bytes are the same: a server decodes each request afresh, and a
/// copy per record would cost about 80 bytes each. A redemption's grant is stored as passed: the engine
/// makes it of its code's strings.
///
/// It serves one process. Several server instances behind a load balancer need a shared store.
public final class InMemoryGrantStore: GrantStore, Sendable {
    /// Every record the store holds, for tests that compare the store before and after a request.
    public struct Snapshot: Hashable, Sendable {
        public var codes: [SecretDigest: AuthorizationCode]
        public var grants: [GrantID: Grant]
        public var refreshTokens: [SecretDigest: RefreshToken]
        public var accessTokens: [SecretDigest: AccessToken]
        public var sessions: [SecretDigest: StudioSession]
        /// When each account last had all its grants revoked, while that still matters.
        public var accountRevocations: [AccountID: Date]

        /// A snapshot of the records given; empty by default — for another store's records read back.
        package init(
            codes: [SecretDigest: AuthorizationCode] = [:],
            grants: [GrantID: Grant] = [:],
            refreshTokens: [SecretDigest: RefreshToken] = [:],
            accessTokens: [SecretDigest: AccessToken] = [:],
            sessions: [SecretDigest: StudioSession] = [:],
            accountRevocations: [AccountID: Date] = [:]
        ) {
            self.codes = codes
            self.grants = grants
            self.refreshTokens = refreshTokens
            self.accessTokens = accessTokens
            self.sessions = sessions
            self.accountRevocations = accountRevocations
        }
    }

    private let storage: LockedValue<InMemoryGrantStorage>

    /// Creates an empty store that knows `clients`.
    ///
    /// The store grows as it fills. So that its writes do not wait inside the lock while the kernel backs
    /// new memory, each table's next chunk of records, and a large index's next size, are allocated and
    /// made resident ahead of need on a background thread (one serial Dispatch queue at utility priority,
    /// shared by every store); the store holds that memory somewhat before it needs it. A server that
    /// knows its size should still say it, with ``init(clients:expectedLiveGrants:)``.
    public init(clients: [Client]) {
        self.storage = LockedValue(InMemoryGrantStorage(clients: clients))
    }

    /// Creates an empty store that knows `clients`, with room reserved for `expectedLiveGrants` grants
    /// and their codes, tokens and sessions.
    ///
    /// A table that outgrows its index rebuilds the index, and one that outgrows its array copies the
    /// records, inside the lock, so every request waits for it — a pause that grows with the store.
    /// Reserving the expected size up front takes those pauses out of the serving path.
    ///
    /// The reserved memory is also made resident here, page by page, rather than by the first write to
    /// each page: that write would wait inside the lock while the kernel — and on a virtual machine often
    /// the host — backs the page. So the process holds the reserved size from the start (about 0.91 KB per
    /// expected grant), and creating the store takes the time the writes would otherwise have spent
    /// waiting: on the CI machine, a virtual machine whose host backs each page on first touch, 0.3–0.6 s
    /// for 100,000 grants and 7–8 s for 10⁶ (`Docs/Performance.md`, "Single writes"). The reservation
    /// stays however far the store shrinks, so that it is still resident when the store grows back.
    public init(clients: [Client], expectedLiveGrants: Int) {
        var storage = InMemoryGrantStorage(clients: clients)
        storage.reserveCapacity(liveGrants: max(0, expectedLiveGrants))
        self.storage = LockedValue(storage)
    }

    /// Creates a store holding exactly the records of `snapshot` — for tests and fuzzing that start many
    /// runs from one prepared state.
    ///
    /// Each record is filed under its own key (a code's, token's or session's digest, a grant's id), as
    /// every store operation files it; a snapshot whose dictionary key for a record differs from the
    /// record's own key — only a hand-built one can — reads back under the record's key.
    public init(clients: [Client], snapshot: Snapshot) {
        self.storage = LockedValue(InMemoryGrantStorage(clients: clients, snapshot: snapshot))
    }

    /// Every record the store holds now.
    public func snapshot() -> Snapshot {
        storage.withLock { $0.snapshot }
    }

    /// Buckets and records of the store's tables, for the tests of their fill.
    var tableSizes: [(records: Int, buckets: Int)] {
        storage.withLock { storage in
            [
                (storage.codes.count, storage.codes.bucketCount),
                (storage.grants.count, storage.grants.bucketCount),
                (storage.refreshTokens.count, storage.refreshTokens.bucketCount),
                (storage.accessTokens.count, storage.accessTokens.bucketCount),
                (storage.sessions.count, storage.sessions.bucketCount),
            ]
        }
    }

    public func client(_ id: ClientID) async throws -> Client? {
        storage.withLock { $0.clients[id] }
    }

    public func insertCode(_ code: AuthorizationCode) async throws {
        try storage.withLock { try $0.insertCode(code) }
    }

    public func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        authorizationCodeNow(digest)
    }

    public func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws -> CodeRedemption {
        try redeemCodeNow(digest, issuing: issuance, at: now)
    }

    public func createGrant(_ issuance: GrantIssuance) async throws -> GrantCreation {
        try storage.withLock { try $0.createGrant(issuance) }
    }

    public func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        refreshTokenNow(digest)
    }

    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        try storage.withLock {
            try $0.rotateRefreshToken(
                presented,
                replacing: current,
                successor: successor,
                accessToken: accessToken,
                at: now
            )
        }
    }

    /// Rotates and starts the session in one critical section: never `nil`.
    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        try storage.withLock {
            try $0.rotateRefreshToken(
                presented,
                replacing: current,
                successor: successor,
                accessToken: accessToken,
                startingSession: session,
                at: now
            )
        }
    }

    public func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws -> SessionReplacement {
        try replaceSessionNow(of: grant, with: session, at: now)
    }

    public func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        revokeGrantNow(id, reason: reason, at: now)
    }

    /// Revokes every live grant of an account and removes its unredeemed codes. It reads the account's
    /// own grants and codes only, through the tables' lists by account: its cost, under the lock, is what
    /// the account holds, not the store's size.
    public func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        storage.withLock { $0.revokeGrants(of: account, reason: reason, at: now) }
    }

    public func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        accessTokenNow(digest)
    }

    public func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        sessionNow(digest)
    }

    public func grant(_ id: GrantID) async throws -> Grant? {
        storage.withLock { $0.grants[id] }
    }

    /// Every stored grant of an account, oldest first. It reads the account's grants only, through the
    /// table's lists by account: its cost is what the account holds, not the store's size.
    public func grants(of account: AccountID) async throws -> [Grant] {
        storage.withLock { storage in
            storage.grants.positions(of: account).map { storage.grants[position: $0] }.sorted(by: Grant.isOlder)
        }
    }

    public func removeExpired(at now: Date) async throws -> Int {
        storage.withLock { $0.removeAllDue(at: now) }
    }
}

// MARK: Without suspending

/// The operations of an exchange and of the checks on later requests, done under the store's lock and
/// returned: ``AuthEngine`` calls them directly when its store is this one, so that an exchange or a
/// check on the in-memory store makes no `async` call into it (each allocated a frame in the task and
/// asked for its executor again on return). The public `async` methods call them too, but for the two
/// rotations, which take their records one by one where the engine's takes its planned rotation.
extension InMemoryGrantStore {
    func authorizationCodeNow(_ digest: SecretDigest) -> AuthorizationCode? {
        storage.withLock { $0.codes[digest] }
    }

    func redeemCodeNow(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) throws -> CodeRedemption {
        try storage.withLock { storage in
            try storage.redeemCode(digest, issuing: issuance, at: now)
        }
    }

    func refreshTokenNow(_ digest: SecretDigest) -> RefreshTokenLookup? {
        storage.withLock { storage in
            guard let token = storage.refreshTokens[digest], let grant = storage.grants[token.grant] else { return nil }
            return RefreshTokenLookup(token: token, grant: grant)
        }
    }

    /// The rotation the engine planned, and with it `session` when there is one.
    func rotateRefreshTokenNow(
        _ rotation: PlannedRotation,
        startingSession session: StudioSession?,
        at now: Date
    ) throws -> RefreshRotation {
        try storage.withLock { storage in
            try storage.rotateRefreshToken(
                rotation.presented,
                replacing: rotation.current,
                successor: rotation.successor,
                accessToken: rotation.accessToken,
                startingSession: session,
                at: now
            )
        }
    }

    func replaceSessionNow(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) throws -> SessionReplacement {
        try storage.withLock { storage in
            try storage.replaceSession(of: grant, with: session, at: now)
        }
    }

    func revokeGrantNow(_ id: GrantID, reason: RevocationReason, at now: Date) -> GrantRevocation {
        storage.withLock { $0.revokeGrant(id, reason: reason, at: now) }
    }

    func accessTokenNow(_ digest: SecretDigest) -> AccessTokenLookup? {
        storage.withLock { storage in
            guard let token = storage.accessTokens[digest], let grant = storage.grants[token.grant] else { return nil }
            return AccessTokenLookup(token: token, grant: grant)
        }
    }

    func sessionNow(_ digest: SecretDigest) -> SessionLookup? {
        storage.withLock { storage in
            guard let session = storage.sessions[digest], let grant = storage.grants[session.grant] else { return nil }
            return SessionLookup(session: session, grant: grant)
        }
    }
}
