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
struct InMemoryGrantStorage: Sendable {
    /// Which record an expiry entry points at.
    enum RecordKey: Sendable {
        case code(SecretDigest)
        case grant(GrantID)
        case refreshToken(SecretDigest)
        case accessToken(SecretDigest)
        case session(SecretDigest)
        case accountRevocation(AccountID)
    }

    /// How many due records each write removes on its way out, so that memory follows the live set
    /// without a pause to sweep everything.
    static let removalsPerWrite = 8

    var clients: [ClientID: Client]
    var codes: [SecretDigest: AuthorizationCode] = [:]
    var grants: [GrantID: Grant] = [:]
    var refreshTokens: [SecretDigest: RefreshToken] = [:]
    var accessTokens: [SecretDigest: AccessToken] = [:]
    var sessions: [SecretDigest: StudioSession] = [:]
    /// When each account last had all its grants revoked, for ``TokenLifetimes/maximumAuthorizationCode``.
    var accountRevocations: [AccountID: Date] = [:]
    var expiries = ExpiryQueue<RecordKey>()

    init(clients: [Client]) {
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Storage holding exactly the records of `snapshot`, each scheduled for removal at its expiry.
    init(clients: [Client], snapshot: InMemoryGrantStore.Snapshot) {
        self.init(clients: clients)
        codes = snapshot.codes
        grants = snapshot.grants
        refreshTokens = snapshot.refreshTokens
        accessTokens = snapshot.accessTokens
        sessions = snapshot.sessions
        accountRevocations = snapshot.accountRevocations
        rebuildExpiries()
    }

    /// Records of every kind held now: the number of entries a freshly built expiry queue has.
    var recordCount: Int {
        codes.count + grants.count + refreshTokens.count + accessTokens.count + sessions.count
            + accountRevocations.count
    }

    /// Schedules every record at its expiry in a new queue, dropping the entries of records that are gone.
    private mutating func rebuildExpiries() {
        var queue = ExpiryQueue<RecordKey>()
        queue.reserveCapacity(recordCount)
        for code in codes.values {
            let retention = code.redemption.flatMap { grants[$0.grant]?.expiresAt } ?? code.expiresAt
            queue.schedule(.code(code.digest), at: retention)
        }
        for grant in grants.values {
            queue.schedule(.grant(grant.id), at: grant.expiresAt)
        }
        for token in refreshTokens.values {
            queue.schedule(.refreshToken(token.digest), at: token.expiresAt)
        }
        for token in accessTokens.values {
            queue.schedule(.accessToken(token.digest), at: token.expiresAt)
        }
        for session in sessions.values {
            queue.schedule(.session(session.digest), at: session.expiresAt)
        }
        for (account, revokedAt) in accountRevocations {
            queue.schedule(.accountRevocation(account), at: Self.revocationRetention(from: revokedAt))
        }
        expiries = queue
    }

    /// Reserves room for `liveGrants` grants, each with a redeemed code, an access token, a refresh
    /// token, a session and their expiry entries.
    mutating func reserveCapacity(liveGrants: Int) {
        codes.reserveCapacity(liveGrants)
        grants.reserveCapacity(liveGrants)
        refreshTokens.reserveCapacity(liveGrants)
        accessTokens.reserveCapacity(liveGrants)
        sessions.reserveCapacity(liveGrants)
        expiries.reserveCapacity(liveGrants * 6)
    }

    // MARK: Writes

    mutating func insertCode(_ code: AuthorizationCode) {
        codes[code.digest] = code
        expiries.schedule(.code(code.digest), at: code.expiresAt)
        removeDue(at: code.issuedAt, limit: Self.removalsPerWrite)
    }

    mutating func redeemCode(_ digest: SecretDigest, issuing issuance: GrantIssuance, at now: Date) -> CodeRedemption {
        guard var code = codes[digest], now < code.expiresAt || code.redemption != nil else { return .notFound }
        if let redemption = code.redemption {
            return .alreadyRedeemed(grant: redemption.grant)
        }
        guard !isRevoked(code.account, atOrAfter: code.issuedAt) else { return .notFound }
        code.redemption = AuthorizationCode.Redemption(grant: issuance.grant.id, redeemedAt: now)
        codes[digest] = code
        // A redeemed code stays until its grant expires, so that a replay can still revoke the grant.
        expiries.schedule(.code(digest), at: issuance.grant.expiresAt)
        store(issuance)
        removeDue(at: now, limit: Self.removalsPerWrite)
        return .redeemed
    }

    mutating func createGrant(_ issuance: GrantIssuance) -> GrantCreation {
        guard !isRevoked(issuance.grant.account, atOrAfter: issuance.authenticatedAt) else { return .accountRevoked }
        store(issuance)
        removeDue(at: issuance.grant.createdAt, limit: Self.removalsPerWrite)
        return .created
    }

    mutating func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) -> RefreshRotation {
        guard var presentedToken = refreshTokens[presented], var grant = grants[presentedToken.grant] else {
            return .notFound
        }
        guard grant.isLive(at: now) else { return .grantNotLive }
        guard grant.currentRefreshToken == current else {
            return .superseded(current: RefreshTokenLookup(token: presentedToken, grant: grant))
        }
        if presented == current {
            presentedToken.state = .rotated(rotatedAt: now, successor: successor.digest)
        } else {
            guard case .rotated(let rotatedAt, let expected) = presentedToken.state, expected == current,
                var retired = refreshTokens[current]
            else {
                return .superseded(current: RefreshTokenLookup(token: presentedToken, grant: grant))
            }
            presentedToken.state = .rotated(rotatedAt: rotatedAt, successor: successor.digest)
            retired.state = .retired(retiredAt: now)
            refreshTokens[current] = retired
        }
        refreshTokens[presented] = presentedToken
        refreshTokens[successor.digest] = successor
        expiries.schedule(.refreshToken(successor.digest), at: successor.expiresAt)
        self.accessTokens[accessToken.digest] = accessToken
        expiries.schedule(.accessToken(accessToken.digest), at: accessToken.expiresAt)
        grant.currentRefreshToken = successor.digest
        grants[grant.id] = grant
        removeDue(at: now, limit: Self.removalsPerWrite)
        return .rotated
    }

    mutating func replaceSession(of grantID: GrantID, with session: StudioSession, at now: Date) -> SessionReplacement {
        guard var grant = grants[grantID], grant.isLive(at: now) else { return .grantNotLive }
        let previous = grant.session
        if let previous {
            sessions[previous] = nil
        }
        sessions[session.digest] = session
        expiries.schedule(.session(session.digest), at: session.expiresAt)
        grant.session = session.digest
        grants[grantID] = grant
        removeDue(at: now, limit: Self.removalsPerWrite)
        return .replaced(previous: previous)
    }

    mutating func revokeGrant(_ grantID: GrantID, reason: RevocationReason, at now: Date) -> GrantRevocation {
        guard var grant = grants[grantID], now < grant.expiresAt else { return .notFound }
        guard grant.revocation == nil else { return .alreadyRevoked(grant) }
        grant.revocation = Grant.Revocation(revokedAt: now, reason: reason)
        grants[grantID] = grant
        // No removal of due records here: a refused request whose only write is the revocation a replay
        // or reuse demands must leave every other record exactly as it was.
        return .revoked(grant)
    }

    mutating func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) -> [Grant] {
        if let previous = accountRevocations[account], previous >= now {
            // A later revocation is already recorded, and its removal already scheduled.
        } else {
            accountRevocations[account] = now
            expiries.schedule(.accountRevocation(account), at: Self.revocationRetention(from: now))
        }
        let unredeemed = codes.values.filter { $0.account == account && $0.redemption == nil }.map(\.digest)
        for digest in unredeemed {
            codes[digest] = nil
        }
        let live = grants.values.filter { $0.account == account && $0.isLive(at: now) }
        var revoked: [Grant] = []
        for var grant in live {
            grant.revocation = Grant.Revocation(revokedAt: now, reason: reason)
            grants[grant.id] = grant
            revoked.append(grant)
        }
        return revoked.sorted { $0.createdAt < $1.createdAt }
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

    private mutating func store(_ issuance: GrantIssuance) {
        let grant = issuance.grant
        grants[grant.id] = grant
        expiries.schedule(.grant(grant.id), at: grant.expiresAt)
        if let token = issuance.accessToken {
            accessTokens[token.digest] = token
            expiries.schedule(.accessToken(token.digest), at: token.expiresAt)
        }
        if let token = issuance.refreshToken {
            refreshTokens[token.digest] = token
            expiries.schedule(.refreshToken(token.digest), at: token.expiresAt)
        }
        if let session = issuance.session {
            sessions[session.digest] = session
            expiries.schedule(.session(session.digest), at: session.expiresAt)
        }
    }

    // MARK: Expiry

    /// Removes up to `limit` records that are due at `now`, and returns how many it removed.
    ///
    /// Also keeps the expiry queue within reach of the records: an entry whose record went early — a
    /// session a refresh replaced, a code an account revocation removed — stays until its time comes,
    /// which for a session is its whole lifetime. Once the queue holds more than twice the records plus
    /// 1,024 entries, it is rebuilt from the records, in time linear in them; at least as many writes as
    /// there are records come between two rebuilds, so the cost per write stays constant on average.
    @discardableResult
    mutating func removeDue(at now: Date, limit: Int) -> Int {
        var removed = 0
        while removed < limit, let key = expiries.popDue(at: now) {
            if removeIfExpired(key, at: now) {
                removed += 1
            }
        }
        if expiries.count > 2 * recordCount + Self.staleEntryAllowance {
            rebuildExpiries()
        }
        return removed
    }

    /// Entries for records already gone that the expiry queue may hold beyond twice the records.
    static let staleEntryAllowance = 1024

    private mutating func removeIfExpired(_ key: RecordKey, at now: Date) -> Bool {
        switch key {
        case .code(let digest):
            guard let code = codes[digest] else { return false }
            if let redemption = code.redemption, let grant = grants[redemption.grant], now < grant.expiresAt {
                return false
            }
            guard code.redemption != nil || code.expiresAt <= now else { return false }
            codes[digest] = nil
        case .grant(let id):
            guard let grant = grants[id], grant.expiresAt <= now else { return false }
            grants[id] = nil
        case .refreshToken(let digest):
            guard let token = refreshTokens[digest], token.expiresAt <= now else { return false }
            refreshTokens[digest] = nil
        case .accessToken(let digest):
            guard let token = accessTokens[digest], token.expiresAt <= now else { return false }
            accessTokens[digest] = nil
        case .session(let digest):
            guard let session = sessions[digest], session.expiresAt <= now else { return false }
            sessions[digest] = nil
        case .accountRevocation(let account):
            guard let revokedAt = accountRevocations[account], Self.revocationRetention(from: revokedAt) <= now else {
                return false
            }
            accountRevocations[account] = nil
        }
        return true
    }
}
