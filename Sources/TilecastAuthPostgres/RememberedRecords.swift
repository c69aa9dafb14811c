// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
package import TilecastAuth

/// The codes and refresh tokens a ``PostgresGrantStore`` wrote itself, as it wrote them: at most
/// `capacity` of them, the latest, keyed by digest (`GrantStore`'s "Remembered records").
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

    // MARK: Remembering

    /// Remembers a code this store inserted; a redeemed one is not worth remembering.
    package func remember(_ code: AuthorizationCode) {
        guard capacity > 0, code.redemption == nil else { return }
        storage.withLock { storage in
            guard storage.codes.updateValue(code, forKey: code.digest) == nil else { return }
            storage.append(.code(code.digest), capacity: capacity)
        }
    }

    /// Remembers a refresh token this store wrote, with its grant as the same write left it.
    package func remember(_ lookup: RefreshTokenLookup) {
        guard capacity > 0 else { return }
        storage.withLock { storage in
            guard storage.refreshTokens.updateValue(lookup, forKey: lookup.token.digest) == nil else { return }
            storage.append(.refreshToken(lookup.token.digest), capacity: capacity)
        }
    }

    /// Forgets a code: it was redeemed, or its redemption found it gone or used.
    package func forgetCode(_ digest: SecretDigest) {
        guard capacity > 0 else { return }
        storage.withLock { _ = $0.codes.removeValue(forKey: digest) }
    }

    /// Forgets the refresh token `presented` that this store's rotation replaced with `successor`, and
    /// remembers the successor with the grant as the rotation left it — when the presented token was
    /// remembered, which holds the grant's fields the rotation does not write.
    package func rotated(_ presented: SecretDigest, to successor: RefreshToken, session: SecretDigest?) {
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

    /// Forgets a refresh token whose rotation found it changed, so that the next request reads it.
    package func forgetRefreshToken(_ digest: SecretDigest) {
        guard capacity > 0 else { return }
        storage.withLock { _ = $0.refreshTokens.removeValue(forKey: digest) }
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
#endif
