// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The records of an ``InMemoryGrantStore`` and the operations on them, as plain mutating methods.
///
/// Every method runs to completion inside the store's lock, which is what makes each
/// ``GrantStore`` operation atomic. Nothing here suspends.
///
/// Records of each kind sit in a ``RecordTable``. Expired records are removed by sweeping: every write
/// looks at ``sweepBudgetPerWrite`` records of each table on its way out, removing those that are due,
/// so memory follows the live set without a pause to sweep everything and without a schedule that costs
/// memory of its own. A table of `n` records is swept whole every `n / 16` writes — up to twice that
/// when the pass removes records, as each removal moves the last record into its place to be looked at
/// — so the records that are due but not yet removed are at most the number written in that time: a
/// sixteenth to an eighth of the table for each record a write adds. A table none of whose records can be due yet — each table keeps a
/// bound on its earliest due second, ``RecordTable/earliestDueSecond`` — is not looked at, and its sweep
/// goes on from where it stopped once one can be.
struct InMemoryGrantStorage: Sendable {
    /// How many records of each table a write looks at, removing the due ones, on its way out.
    static let sweepBudgetPerWrite = 16
    /// How many account revocations a write removes, at most, once their retention has passed.
    static let revocationRemovalsPerWrite = 8

    var clients: [ClientID: Client]
    var codes = RecordTable<AuthorizationCode>()
    var grants = RecordTable<Grant>()
    var refreshTokens = RecordTable<RefreshToken>()
    var accessTokens = RecordTable<AccessToken>()
    var sessions = RecordTable<StudioSession>()
    /// When each account last had all its grants revoked, for ``TokenLifetimes/maximumAuthorizationCode``.
    var accountRevocations: [AccountID: Date] = [:]
    /// When each account revocation may be forgotten. Revocations are rare, so a schedule is cheap here.
    var revocationExpiries = ExpiryQueue<AccountID>()
    /// One copy of the strings records hold alike: client ids, redirect URIs, scopes.
    var sharedStrings = SharedStrings()

    init(clients: [Client]) {
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Storage holding exactly the records of `snapshot`.
    init(clients: [Client], snapshot: InMemoryGrantStore.Snapshot) {
        self.init(clients: clients)
        codes.reserveCapacity(snapshot.codes.count)
        grants.reserveCapacity(snapshot.grants.count)
        refreshTokens.reserveCapacity(snapshot.refreshTokens.count)
        accessTokens.reserveCapacity(snapshot.accessTokens.count)
        sessions.reserveCapacity(snapshot.sessions.count)
        for grant in snapshot.grants.values {
            grants.upsert(sharedStrings.share(grant, client: self.clients[grant.client]), dueAt: grant.expiresAt)
        }
        for code in snapshot.codes.values {
            codes.upsert(sharedStrings.share(code, client: self.clients[code.client]), dueAt: retention(of: code))
        }
        for token in snapshot.refreshTokens.values {
            refreshTokens.upsert(token, dueAt: token.expiresAt)
        }
        for token in snapshot.accessTokens.values {
            accessTokens.upsert(token, dueAt: token.expiresAt)
        }
        for session in snapshot.sessions.values {
            sessions.upsert(session, dueAt: session.expiresAt)
        }
        accountRevocations = snapshot.accountRevocations
        for (account, revokedAt) in snapshot.accountRevocations {
            revocationExpiries.schedule(account, at: Self.revocationRetention(from: revokedAt))
        }
    }

    /// Every record, as dictionaries keyed the way the store finds them.
    var snapshot: InMemoryGrantStore.Snapshot {
        func dictionary<Record: TableRecord>(_ table: RecordTable<Record>) -> [Record.Key: Record] {
            Dictionary(uniqueKeysWithValues: table.records.map { ($0.key, $0) })
        }
        return InMemoryGrantStore.Snapshot(
            codes: dictionary(codes),
            grants: dictionary(grants),
            refreshTokens: dictionary(refreshTokens),
            accessTokens: dictionary(accessTokens),
            sessions: dictionary(sessions),
            accountRevocations: accountRevocations
        )
    }

    /// When a code may go: at its expiry while unredeemed; once redeemed, not before its grant expires,
    /// so that a replay can still revoke the grant.
    private func retention(of code: AuthorizationCode) -> Date {
        code.redemption.flatMap { grants[$0.grant]?.expiresAt } ?? code.expiresAt
    }

    /// Reserves room for `liveGrants` grants, each with a redeemed code, an access token, a refresh
    /// token and a session, and for a quarter as many again of each: records due but not yet swept,
    /// rotated refresh tokens, codes not yet redeemed. A store sized exactly would grow its indexes on
    /// the first write past the expected size.
    mutating func reserveCapacity(liveGrants: Int) {
        let records = liveGrants + liveGrants / 4
        codes.reserveCapacity(records)
        grants.reserveCapacity(records)
        refreshTokens.reserveCapacity(records)
        accessTokens.reserveCapacity(records)
        sessions.reserveCapacity(records)
    }

    // MARK: Writes

    mutating func insertCode(_ code: AuthorizationCode) throws(InMemoryGrantStoreError) {
        guard codes.position(of: code.digest) == nil else { throw .codeAlreadyStored }
        codes.insert(sharedStrings.share(code, client: clients[code.client]), dueAt: code.expiresAt)
        sweep(at: code.issuedAt)
    }

    mutating func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) throws(InMemoryGrantStoreError) -> CodeRedemption {
        prefetch(issuance)
        guard let position = codes.position(of: digest) else { return .notFound }
        // What the checks read, read where the code lies: a copy of the whole code would retain each of its
        // strings and release them again.
        let (redemption, expiresAt, account, issuedAt) = codes.withRecord(at: position) {
            ($0.redemption, $0.expiresAt, $0.account, $0.issuedAt)
        }
        if let redemption {
            return .alreadyRedeemed(grant: redemption.grant)
        }
        guard now < expiresAt, !isRevoked(account, atOrAfter: issuedAt) else { return .notFound }
        try requireUnstored(issuance)
        // The closure captures the grant's id alone: capturing the issuance copied it, strings and all.
        let grant = issuance.grant.id
        codes.modify(at: position) {
            $0.redemption = AuthorizationCode.Redemption(grant: grant, redeemedAt: now)
        }
        // A redeemed code stays until its grant expires, so that a replay can still revoke the grant.
        codes.setDue(at: position, issuance.grant.expiresAt)
        store(issuance)
        sweep(at: now)
        return .redeemed
    }

    mutating func createGrant(_ issuance: GrantIssuance) throws(InMemoryGrantStoreError) -> GrantCreation {
        prefetch(issuance)
        guard !isRevoked(issuance.grant.account, atOrAfter: issuance.authenticatedAt) else { return .accountRevoked }
        try requireUnstored(issuance)
        var issuance = issuance
        issuance.grant = sharedStrings.share(issuance.grant, client: clients[issuance.grant.client])
        store(issuance)
        sweep(at: issuance.grant.createdAt)
        return .created
    }

    mutating func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession? = nil,
        at now: Date
    ) throws(InMemoryGrantStoreError) -> RefreshRotation {
        refreshTokens.prefetch(successor.digest)
        accessTokens.prefetch(accessToken.digest)
        if let session {
            sessions.prefetch(session.digest)
        }
        guard let presentedPosition = refreshTokens.position(of: presented),
            let grantPosition = grants.position(of: refreshTokens.withRecord(at: presentedPosition) { $0.grant })
        else {
            return .notFound
        }
        // The presented token's state is all the checks read of it, and all the rotation changes; the
        // whole record is copied only for the answer that returns it.
        let presentedState = refreshTokens.withRecord(at: presentedPosition) { $0.state }
        // What the checks read of the grant, read where it lies; the whole grant, strings and all, is
        // copied only for the answer that returns it.
        let (grantID, isLive, currentRefreshToken) = grants.withRecord(at: grantPosition) {
            ($0.id, $0.isLive(at: now), $0.currentRefreshToken)
        }
        // A session, successor or access token of another grant, with a session asked for, is a caller's
        // mistake: refused as not found, before anything is written (GrantStore's contract; PostgreSQL's
        // function answers the same).
        if let session {
            guard session.grant == grantID, successor.grant == grantID, accessToken.grant == grantID else {
                return .notFound
            }
        }
        guard isLive else { return .grantNotLive }
        guard currentRefreshToken == current else {
            return .superseded(current: refreshTokenLookup(at: presentedPosition, grantAt: grantPosition))
        }
        // A leeway retry (presented ≠ current): the presented token must still point at `current`, and
        // `current` be stored; it becomes retired.
        var retiredPosition: Int?
        let rotatedState: RefreshToken.State
        if presented == current {
            rotatedState = .rotated(rotatedAt: now, successor: successor.digest)
        } else {
            guard case .rotated(let rotatedAt, let expected) = presentedState, expected == current,
                let position = refreshTokens.position(of: current)
            else {
                return .superseded(current: refreshTokenLookup(at: presentedPosition, grantAt: grantPosition))
            }
            rotatedState = .rotated(rotatedAt: rotatedAt, successor: successor.digest)
            retiredPosition = position
        }
        // Every refusal an outcome reports came first (GrantStore's contract, "Keys"); nothing is written
        // yet, and a key already stored throws before anything is.
        guard refreshTokens.position(of: successor.digest) == nil else { throw .refreshTokenAlreadyStored }
        guard accessTokens.position(of: accessToken.digest) == nil else { throw .accessTokenAlreadyStored }
        if let session, sessions.position(of: session.digest) != nil { throw .sessionAlreadyStored }
        if let retiredPosition {
            refreshTokens.modify(at: retiredPosition) { $0.state = .retired(retiredAt: now) }
        }
        refreshTokens.modify(at: presentedPosition) { $0.state = rotatedState }
        refreshTokens.insert(successor, dueAt: successor.expiresAt)
        accessTokens.insert(accessToken, dueAt: accessToken.expiresAt)
        grants.modify(at: grantPosition) { $0.currentRefreshToken = successor.digest }
        if let session {
            startSession(session, ofGrantAt: grantPosition)
        }
        sweep(at: now)
        return .rotated
    }

    /// The refresh token at `position` with its grant at `grantPosition`, both copied whole: a
    /// superseded rotation's answer.
    private func refreshTokenLookup(at position: Int, grantAt grantPosition: Int) -> RefreshTokenLookup {
        RefreshTokenLookup(token: refreshTokens[position: position], grant: grants[position: grantPosition])
    }

    mutating func replaceSession(
        of grantID: GrantID,
        with session: StudioSession,
        at now: Date
    ) throws(InMemoryGrantStoreError) -> SessionReplacement {
        sessions.prefetch(session.digest)
        guard let grantPosition = grants.position(of: grantID),
            grants.withRecord(at: grantPosition, { $0.isLive(at: now) })
        else {
            return .grantNotLive
        }
        guard sessions.position(of: session.digest) == nil else { throw .sessionAlreadyStored }
        let previous = startSession(session, ofGrantAt: grantPosition)
        sweep(at: now)
        return .replaced(previous: previous)
    }

    /// Ends the session of the grant at `grantPosition`, if it has one, and makes `session` its session;
    /// returns the digest of the session ended. The grant is live, and the caller has found `session`'s
    /// key unstored.
    @discardableResult
    private mutating func startSession(_ session: StudioSession, ofGrantAt grantPosition: Int) -> SecretDigest? {
        let previous = grants.withRecord(at: grantPosition) { $0.session }
        if let previous {
            sessions.remove(previous)
        }
        sessions.insert(session, dueAt: session.expiresAt)
        grants.modify(at: grantPosition) { $0.session = session.digest }
        return previous
    }

    mutating func revokeGrant(_ grantID: GrantID, reason: RevocationReason, at now: Date) -> GrantRevocation {
        guard let position = grants.position(of: grantID), grants.withRecord(at: position, { now < $0.expiresAt })
        else {
            return .notFound
        }
        let grant = grants[position: position]
        guard grant.revocation == nil else { return .alreadyRevoked(grant) }
        // No sweep here: a refused request whose only write is the revocation a replay or reuse demands
        // must leave every other record exactly as it was.
        return .revoked(
            grants.modify(at: position) {
                $0.revocation = Grant.Revocation(revokedAt: now, reason: reason)
                return $0
            }
        )
    }

    mutating func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) -> [Grant] {
        // Both tables' index buckets of the account asked for at once, to arrive while the revocation is
        // recorded: in a large store each is a cache miss, and the lists start from them.
        let tag = AccountGroups.tag(of: account)
        codes.prefetchPositions(ofAccountTagged: tag)
        grants.prefetchPositions(ofAccountTagged: tag)
        if let previous = accountRevocations[account], previous >= now {
            // A later revocation is already recorded, and its removal already scheduled.
        } else {
            accountRevocations[account] = now
            revocationExpiries.schedule(account, at: Self.revocationRetention(from: now))
        }
        // The account's own records only, through the tables' lists by account.
        let unredeemed = codes.positions(of: account, tag: tag).map { codes[position: $0] }
            .filter { $0.redemption == nil }
        for code in unredeemed {
            codes.remove(code.key)
        }
        var revoked: [Grant] = []
        for position in grants.positions(of: account, tag: tag) where grants[position: position].isLive(at: now) {
            revoked.append(
                grants.modify(at: position) {
                    $0.revocation = Grant.Revocation(revokedAt: now, reason: reason)
                    return $0
                }
            )
        }
        return revoked.sorted(by: Grant.isOlder)
    }

    /// Whether `account` had all its grants revoked at or after `time`.
    private func isRevoked(_ account: AccountID, atOrAfter time: Date) -> Bool {
        guard let revokedAt = accountRevocations[account] else { return false }
        return time <= revokedAt
    }

    /// When the record of a revocation at `revokedAt` may go: no code issued before it lives longer.
    private static func revocationRetention(from revokedAt: Date) -> Date {
        revokedAt.addingTimeInterval(TokenLifetimes.maximumAuthorizationCode.timeInterval)
    }

    /// Asks for the index buckets ``store(_:)`` will write, before the operation's other reads: the
    /// records' keys are fresh random values, so each bucket is a cache miss of its own, and asked for
    /// together they overlap instead of following one another. At 10⁶ grants, together with the response
    /// writer of the same change set, an exchange went from 9.1 to 7.4 µs (`Docs/Performance.md`).
    ///
    /// Always inlined: as a function of its own, called from a write, it was given a copy of the whole
    /// storage (1,608 bytes, a `memcpy` at the start of every redemption) to read four tables' indexes.
    @inline(__always)
    private func prefetch(_ issuance: GrantIssuance) {
        grants.prefetch(issuance.grant.id)
        if let token = issuance.accessToken {
            accessTokens.prefetch(token.digest)
        }
        if let token = issuance.refreshToken {
            refreshTokens.prefetch(token.digest)
        }
        if let session = issuance.session {
            sessions.prefetch(session.digest)
        }
    }

    /// Throws if a record of `issuance` has a key already stored — a caller's mistake, refused before
    /// anything is written rather than replacing another grant's record (``InMemoryGrantStoreError``).
    /// Its reads are of the buckets ``prefetch(_:)`` asked for.
    @inline(__always)
    private func requireUnstored(_ issuance: GrantIssuance) throws(InMemoryGrantStoreError) {
        guard grants.position(of: issuance.grant.id) == nil else { throw .grantAlreadyStored }
        if let token = issuance.accessToken, accessTokens.position(of: token.digest) != nil {
            throw .accessTokenAlreadyStored
        }
        if let token = issuance.refreshToken, refreshTokens.position(of: token.digest) != nil {
            throw .refreshTokenAlreadyStored
        }
        if let session = issuance.session, sessions.position(of: session.digest) != nil {
            throw .sessionAlreadyStored
        }
    }

    /// Writes the records of `issuance`, whose keys ``requireUnstored(_:)`` has found unstored: each is
    /// inserted without looking its key up again.
    private mutating func store(_ issuance: GrantIssuance) {
        let grant = issuance.grant
        grants.insert(grant, dueAt: grant.expiresAt)
        if let token = issuance.accessToken {
            accessTokens.insert(token, dueAt: token.expiresAt)
        }
        if let token = issuance.refreshToken {
            refreshTokens.insert(token, dueAt: token.expiresAt)
        }
        if let session = issuance.session {
            sessions.insert(session, dueAt: session.expiresAt)
        }
    }

    // MARK: Expiry

    /// The sweep every write ends with: ``sweepBudgetPerWrite`` records of each table.
    private mutating func sweep(at now: Date) {
        removeDue(at: now, budget: Self.sweepBudgetPerWrite, revocations: Self.revocationRemovalsPerWrite)
    }

    /// Removes every record that is due at `now`, and returns how many it removed.
    mutating func removeAllDue(at now: Date) -> Int {
        codes.rewindSweep()
        grants.rewindSweep()
        refreshTokens.rewindSweep()
        accessTokens.rewindSweep()
        sessions.rewindSweep()
        return removeDue(at: now, budget: .max, revocations: .max)
    }

    /// Looks at up to `budget` records of each table and removes the due ones, and up to `revocations`
    /// account revocations whose retention has passed.
    @discardableResult
    private mutating func removeDue(at now: Date, budget: Int, revocations: Int) -> Int {
        // `Date`'s `<=` holds against a time that is not a number, which would call every record due.
        guard !now.timeIntervalSince1970.isNaN else { return 0 }
        var removed = 0
        // Codes first: a redeemed code's due time is its grant's expiry, checked against the grant while
        // the grant is still there to be read — borrowed, not copied, but lent on the stack, so only to a
        // sweep that may find a code due.
        if codes.mayHaveDue(at: now) {
            removed += codes.sweep(at: now, budget: budget, reading: grants) { code, grants in
                if let redemption = code.redemption, let position = grants.position(of: redemption.grant),
                    grants.withRecord(at: position, { now < $0.expiresAt })
                {
                    return false
                }
                return code.redemption != nil || code.expiresAt <= now
            }
        }
        removed += grants.sweep(at: now, budget: budget) { $0.expiresAt <= now }
        removed += refreshTokens.sweep(at: now, budget: budget) { $0.expiresAt <= now }
        removed += accessTokens.sweep(at: now, budget: budget) { $0.expiresAt <= now }
        removed += sessions.sweep(at: now, budget: budget) { $0.expiresAt <= now }
        var forgotten = 0
        while forgotten < revocations, let account = revocationExpiries.popDue(at: now) {
            guard let revokedAt = accountRevocations[account], Self.revocationRetention(from: revokedAt) <= now else {
                continue
            }
            accountRevocations[account] = nil
            forgotten += 1
        }
        return removed + forgotten
    }
}

extension AuthorizationCode: TableRecord {
    var key: SecretDigest { digest }
    var listingAccount: AccountID? { account }
    static var isListedByAccount: Bool { true }
}

extension Grant: TableRecord {
    var key: GrantID { id }
    var listingAccount: AccountID? { account }
    static var isListedByAccount: Bool { true }
}

extension RefreshToken: TableRecord {
    var key: SecretDigest { digest }
}

extension AccessToken: TableRecord {
    var key: SecretDigest { digest }
}

extension StudioSession: TableRecord {
    var key: SecretDigest { digest }
}
