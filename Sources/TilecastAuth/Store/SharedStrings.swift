// SPDX-License-Identifier: Apache-2.0

/// One copy of the strings that many records of an ``InMemoryGrantStore`` hold alike.
///
/// A `String` of more than 15 UTF-8 bytes keeps its bytes in storage of its own, which its copies share.
/// A server decodes every request afresh, so each code it issues brings its own copy of the redirect URI,
/// the scope, and a client id or account id of that length — and a store that kept what it was given
/// would hold them once per record: measured as a server receives its requests (`tilecast-auth bench`,
/// `Docs/Performance.md`, "Memory per live grant"), about 230 bytes per live grant more than with one
/// copy of each. So the store keeps, in place of the caller's copy:
///
/// - a code's or grant's client id, and a code's redirect URI: the registered client's own;
/// - a scope: the copy in ``scopes``, a pool of at most ``scopeCapacity`` scopes, kept for the store's
///   life (a pool that is full takes no more, and a scope outside it is stored as given).
///
/// A code's redemption is left alone: the engine makes the grant of the code's own strings, so they are
/// shared already, and comparing them again cost the exchange about 3 % of its samples in a profile.
/// A string is swapped only for one with the same bytes. Swift's `==` also finds strings equal that
/// Unicode calls canonically equivalent — "é" as one scalar or as "e" and a combining accent — and the
/// exchange compares a redirect URI byte for byte (RFC 6749 §4.1.3), so a record always keeps the bytes
/// it was given.
struct SharedStrings: Sendable {
    /// How many scopes the pool keeps. A client's scopes are a handful of combinations of its tokens.
    static let scopeCapacity = 64

    /// Scopes of more than 15 bytes, one copy each.
    private(set) var scopes: Set<Scope> = []

    /// The pool's copy of `scope`, which it takes if it has none and room for one.
    mutating func share(_ scope: Scope) -> Scope {
        guard Self.hasStorage(scope.rawValue) else { return scope }
        if let index = scopes.firstIndex(of: scope) {
            let pooled = scopes[index]
            return ASCII.equal(pooled.rawValue, scope.rawValue) ? pooled : scope
        }
        if scopes.count < Self.scopeCapacity {
            scopes.insert(scope)
        }
        return scope
    }

    /// `code` with the registered client's id and redirect URI and the pool's scope where they have the
    /// same bytes as its own.
    mutating func share(_ code: AuthorizationCode, client: Client?) -> AuthorizationCode {
        var code = code
        if let client {
            code.client = Self.same(code.client, as: client.id)
            if Self.hasStorage(code.redirectURI),
                let registered = client.redirectURIs.first(where: { ASCII.equal($0, code.redirectURI) })
            {
                code.redirectURI = registered
            }
        }
        code.scope = share(code.scope)
        return code
    }

    /// `grant` with the registered client's id and the pool's scope where they have the same bytes.
    mutating func share(_ grant: Grant, client: Client?) -> Grant {
        var grant = grant
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

    /// Whether `text` is too long to be kept inside its `String` (15 UTF-8 bytes on 64-bit platforms).
    private static func hasStorage(_ text: String) -> Bool {
        text.utf8.count > 15
    }
}
