// SPDX-License-Identifier: Apache-2.0

/// One copy of the strings that many records of an ``InMemoryGrantStore`` hold alike.
///
/// A `String` of more than 15 UTF-8 bytes keeps its bytes in storage of its own, which its copies share.
/// A server decodes every request afresh, so each code it issues brings its own copy of the redirect URI
/// and the scope, and a store that kept what it was given would hold them once per record: measured as a
/// server receives its requests (`tilecast-auth bench`, `Docs/Performance.md`, "Memory per live grant"),
/// 173 bytes per live grant more than with one copy of each. So the store keeps, in place of the
/// caller's copy:
///
/// - a code's or grant's client id, and a code's redirect URI: the registered client's own (the engine
///   passes the registered id already; a caller of the store itself may not);
/// - a scope of at most ``longestPooledScope`` bytes: the copy in a pool of ``scopeCapacity`` scopes.
///
/// Account ids are not shared: each code keeps the copy it was given, and the grant made of it holds the
/// same.
/// A code's redemption is left alone: the engine makes the grant of the code's own strings, so they are
/// shared already, and comparing them again cost the exchange about 3 % of its samples in a profile. A
/// caller of ``InMemoryGrantStore/redeemCode(_:issuing:at:)`` that passes fresh copies keeps them.
///
/// A string is swapped only for one with the same bytes. Swift's `==` also finds strings equal that
/// Unicode calls canonically equivalent — "é" as one scalar or as "e" and a combining accent — and the
/// exchange compares a redirect URI byte for byte (RFC 6749 §4.1.3), so a record always keeps the bytes
/// it was given.
///
/// The scopes a client may be granted are any sequence of its tokens, repeats and all, so the pool cannot
/// hold them all, and one account issuing ever new scopes must not push out the ones in use. It keeps its
/// own compact copy of each scope (never the caller's string, whose storage may be larger than its
/// bytes), refuses scopes longer than ``longestPooledScope``, and when full replaces the first scope,
/// going round, that no record other than the one that brought it was stored with since the pool last
/// passed it (the CLOCK policy). A scope stored with at least once per turn of the hand — at most
/// ``scopeCapacity`` new scopes, fewer the more of the pool is in use — stays; under a stream of new
/// scopes a rarer one is copied again on its next use, at worst once per record, which is the cost
/// without the pool. A record keeps its own reference to its scope, so replacing one in the pool changes
/// no record. Scopes no record still uses hold at most ``scopeCapacity`` heap blocks of up to
/// ``longestPooledScope`` bytes and their header, about 20 KiB.
struct SharedStrings: Sendable {
    /// How many scopes the pool keeps.
    static let scopeCapacity = 64
    /// The longest scope, in bytes, that the pool keeps; a longer one is stored as given.
    static let longestPooledScope = 256

    /// A pooled scope, and whether a record was stored with it since the pool last passed it.
    private struct Slot: Sendable {
        var scope: Scope
        var recentlyUsed: Bool
    }

    private var slots: [Slot] = []
    /// From each pooled scope to its slot.
    private var slotOfScope: [Scope: Int] = [:]
    /// The next slot the pool looks at when it needs room.
    private var hand = 0

    /// The pooled scopes, for tests.
    var pooledScopes: [Scope] { slots.map(\.scope) }
    /// Whether the index from scope to slot names exactly the pooled scopes, each at its slot, for tests.
    var isIndexConsistent: Bool {
        slotOfScope.count == slots.count && slots.indices.allSatisfy { slotOfScope[slots[$0].scope] == $0 }
    }

    /// The pool's copy of `scope`, which it makes if it has none.
    mutating func share(_ scope: Scope) -> Scope {
        let length = scope.rawValue.utf8.count
        guard length > 15, length <= Self.longestPooledScope else { return scope }
        if let slot = slotOfScope[scope], ASCII.equal(slots[slot].scope.rawValue, scope.rawValue) {
            slots[slot].recentlyUsed = true
            return slots[slot].scope
        }
        // A scope's bytes are ASCII (RFC 6749 §3.3's grammar, checked by `Scope.init`), so `String`'s
        // `==` and hash, which the dictionary uses, are byte equality here; the check above makes sure.
        guard let copy = Scope(Self.compactCopy(of: scope.rawValue)) else { return scope }
        let slot: Int
        if slots.count < Self.scopeCapacity {
            slot = slots.count
            slots.append(Slot(scope: copy, recentlyUsed: false))
        } else {
            while slots[hand].recentlyUsed {
                slots[hand].recentlyUsed = false
                hand = (hand + 1) % slots.count
            }
            slot = hand
            hand = (hand + 1) % slots.count
            slotOfScope[slots[slot].scope] = nil
            slots[slot] = Slot(scope: copy, recentlyUsed: false)
        }
        slotOfScope[copy] = slot
        return copy
    }

    /// `code` with the registered client's id and redirect URI and the pool's scope where they have the
    /// same bytes as its own.
    ///
    /// Takes `code` over and changes it in place, as `share(_ grant:client:)` does a grant: a borrowed
    /// record was copied to be changed and copied again to be returned, retaining its strings each time.
    mutating func share(_ code: consuming AuthorizationCode, client: Client?) -> AuthorizationCode {
        if let client {
            code.client = Self.same(code.client, as: client.id)
            // The closure captures the URI alone: capturing the code would copy it.
            let redirectURI = code.redirectURI
            if redirectURI.utf8.count > 15,
                let registered = client.redirectURIs.first(where: { ASCII.equal($0, redirectURI) })
            {
                code.redirectURI = registered
            }
        }
        code.scope = share(code.scope)
        return code
    }

    /// `grant` with the registered client's id and the pool's scope where they have the same bytes.
    mutating func share(_ grant: consuming Grant, client: Client?) -> Grant {
        if let client {
            grant.client = Self.same(grant.client, as: client.id)
        }
        grant.scope = share(grant.scope)
        return grant
    }

    /// `shared` if it has the same bytes as `identifier`; `identifier` otherwise.
    private static func same<Identifier: _StringIdentifier>(
        _ identifier: Identifier,
        as shared: Identifier
    ) -> Identifier {
        ASCII.equal(identifier.rawValue, shared.rawValue) ? shared : identifier
    }

    /// A new string of `text`'s bytes in storage of its own, no larger than they need.
    private static func compactCopy(of text: String) -> String {
        text.withLentUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count) { buffer in
                _ = buffer.initialize(fromContentsOf: bytes)
                return bytes.count
            }
        }
    }
}
