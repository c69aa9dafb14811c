// SPDX-License-Identifier: Apache-2.0

/// The codes and refresh tokens a store wrote itself, as it wrote them: at most `capacity` of them, the
/// latest, keyed by digest (``GrantStore``'s "Remembered records"). `PostgresGrantStore` keeps one, and
/// so does the test kit's `RememberingStore`, which puts the same policy in front of any store.
///
/// What is remembered may be stale — another instance may have redeemed, rotated or revoked since — and
/// the engine only goes forward on it as far as the atomic write, which checks again under its locks.
/// A record is forgotten when this store's own write uses it up (a code redeemed, a token rotated), and
/// otherwise when `capacity` later ones push it out, oldest first. Only digests and the fields stored
/// beside them are kept, never a secret.
package final class RememberedRecords: Sendable {
    private enum Key: Hashable {
        case code(SecretDigest)
        case refreshToken(SecretDigest)
    }

    private struct Storage {
        var codes: [SecretDigest: AuthorizationCode] = [:]
        var refreshTokens: [SecretDigest: RefreshTokenLookup] = [:]
        /// The keys in the order they were remembered, as a ring of at most `capacity`; a key forgotten
        /// early stays in it until its turn, so that the ring never needs searching.
        var order: [Key] = []
        var oldest = 0
        var used = 0
        var foundStale = 0

        var count: Int { codes.count + refreshTokens.count }

        mutating func append(_ key: Key, capacity: Int) {
            if order.count < capacity {
                order.append(key)
                return
            }
            switch order[oldest] {
            case .code(let digest): codes[digest] = nil
            case .refreshToken(let digest): refreshTokens[digest] = nil
            }
            order[oldest] = key
            oldest = (oldest + 1) % capacity
        }
    }

    /// The most records remembered at once; 0 remembers none.
    package let capacity: Int
    private let storage = LockedValue(Storage())

    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// How many records are remembered now.
    package var count: Int { storage.withLock { $0.count } }

    /// How many lookups were answered from memory.
    package var used: Int { storage.withLock { $0.used } }

    /// How many remembered records a write of this store found changed since: a code it redeemed that was
    /// used or gone, a token it rotated that had been rotated, retired, or whose grant was no longer
    /// live.
    package var foundStale: Int { storage.withLock { $0.foundStale } }

    // MARK: Remembering

    /// Remembers a code this store inserted; a redeemed one is not worth remembering.
    private func remember(_ code: AuthorizationCode) {
        guard capacity > 0, code.redemption == nil else { return }
        storage.withLock { storage in
            guard storage.codes.updateValue(code, forKey: code.digest) == nil else { return }
            storage.append(.code(code.digest), capacity: capacity)
        }
    }

    /// Remembers a refresh token this store wrote, with its grant as the same write left it.
    private func remember(_ lookup: RefreshTokenLookup) {
        guard capacity > 0 else { return }
        storage.withLock { storage in
            guard storage.refreshTokens.updateValue(lookup, forKey: lookup.token.digest) == nil else { return }
            storage.append(.refreshToken(lookup.token.digest), capacity: capacity)
        }
    }

    /// Forgets a code — it was redeemed, or its redemption found it gone or used; whether it was
    /// remembered.
    private func forgetCode(_ digest: SecretDigest) -> Bool {
        guard capacity > 0 else { return false }
        return storage.withLock { $0.codes.removeValue(forKey: digest) != nil }
    }

    /// Forgets the refresh token `presented` that this store's rotation replaced with `successor`, and
    /// remembers the successor with the grant as the rotation left it — when the presented token was
    /// remembered, which holds the grant's fields the rotation does not write.
    private func rotated(_ presented: SecretDigest, to successor: RefreshToken, session: SecretDigest?) {
        guard capacity > 0 else { return }
        storage.withLock { storage in
            guard var lookup = storage.refreshTokens.removeValue(forKey: presented) else { return }
            lookup.token = successor
            lookup.grant.currentRefreshToken = successor.digest
            if let session { lookup.grant.session = session }
            guard storage.refreshTokens.updateValue(lookup, forKey: successor.digest) == nil else { return }
            storage.append(.refreshToken(successor.digest), capacity: capacity)
        }
    }

    /// Forgets a refresh token — its rotation found it changed, so the next request reads it; whether it
    /// was remembered.
    @discardableResult
    private func forgetRefreshToken(_ digest: SecretDigest) -> Bool {
        guard capacity > 0 else { return false }
        return storage.withLock { $0.refreshTokens.removeValue(forKey: digest) != nil }
    }

    /// Counts a remembered record a write found changed.
    private func countStale() {
        storage.withLock { $0.foundStale += 1 }
    }

    // MARK: After a store's writes
    //
    // What a store remembers and forgets once a write answered, by the write's outcome. A write that
    // throws calls none of these: its outcome is unknown, and what is remembered stays as it was.

    /// After ``GrantStore/insertCode(_:)`` answered.
    package func inserted(_ code: AuthorizationCode) {
        remember(code)
    }

    /// After ``GrantStore/redeemCode(_:issuing:at:)`` answered `outcome`: the code is used up or gone
    /// either way, and a redemption remembers the refresh token it wrote, with its grant.
    package func redeemed(_ digest: SecretDigest, issuing issuance: GrantIssuance, outcome: CodeRedemption) {
        let wasRemembered = forgetCode(digest)
        if case .redeemed = outcome {
            remember(issuance)
        } else if wasRemembered {
            countStale()
        }
    }

    /// After ``GrantStore/createGrant(_:)`` answered `outcome`.
    package func created(_ issuance: GrantIssuance, outcome: GrantCreation) {
        if case .created = outcome { remember(issuance) }
    }

    /// After a rotation answered: when it rotated, the successor is remembered in place of the presented
    /// token and, on a leeway retry, the successor it retired is forgotten; otherwise the presented token
    /// is forgotten, as its rotation found it changed.
    package func rotation(
        of presented: SecretDigest,
        replacing current: SecretDigest,
        to successor: RefreshToken,
        session: SecretDigest?,
        rotated: Bool
    ) {
        guard rotated else {
            if forgetRefreshToken(presented) { countStale() }
            return
        }
        if current != presented { forgetRefreshToken(current) }
        self.rotated(presented, to: successor, session: session)
    }

    /// Remembers the refresh token of a grant the store wrote, with the grant.
    private func remember(_ issuance: GrantIssuance) {
        guard let token = issuance.refreshToken else { return }
        remember(RefreshTokenLookup(token: token, grant: issuance.grant))
    }

    // MARK: Recalling

    package func code(_ digest: SecretDigest) -> AuthorizationCode? {
        guard capacity > 0 else { return nil }
        return storage.withLock { storage in
            let code = storage.codes[digest]
            if code != nil { storage.used += 1 }
            return code
        }
    }

    package func refreshToken(_ digest: SecretDigest) -> RefreshTokenLookup? {
        guard capacity > 0 else { return nil }
        return storage.withLock { storage in
            let lookup = storage.refreshTokens[digest]
            if lookup != nil { storage.used += 1 }
            return lookup
        }
    }
}
