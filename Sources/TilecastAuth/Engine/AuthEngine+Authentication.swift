// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AuthEngine {
    /// Authenticates a Studio session cookie value.
    ///
    /// Valid when the session exists and has not been replaced, neither it nor its grant has expired,
    /// the grant is not revoked (revoking the grant ends the session) and the account is active.
    ///
    /// - Throws: The store's or the account directory's error.
    public func authenticateSession(cookieValue: String) async throws -> Authentication {
        guard let token = OpaqueToken(presented: cookieValue, as: .studioSession) else {
            return .unauthenticated(.malformed)
        }
        // A session the grant no longer points at was replaced: it must not authenticate even if a store
        // kept its record.
        guard let lookup = try await session(token.digest), lookup.grant.session == token.digest else {
            return .unauthenticated(.notFound)
        }
        return try await authenticate(lookup.grant, expiresAt: lookup.session.expiresAt)
    }

    /// Authenticates the Studio session cookie a request's `Cookie` fields carry — the cookie named
    /// exactly as configured (rfc6265bis §5.4: no case variants). Two such cookies are refused as
    /// ambiguous rather than guessed between.
    public func authenticateSession(headers: HeaderFields) async throws -> Authentication {
        let values = CookieHeader.values(named: configuration.cookie.name, in: headers.values(for: "Cookie"))
        switch values.count {
        case 0: return .unauthenticated(.missing)
        case 1: return try await authenticateSession(cookieValue: values[0])
        default: return .unauthenticated(.ambiguous)
        }
    }

    /// Authenticates an `Authorization` field value of the form `Bearer <access token>` (RFC 6750 §2.1;
    /// the scheme is case-insensitive).
    public func authenticateBearer(authorization: String?) async throws -> Authentication {
        guard let authorization else { return .unauthenticated(.missing) }
        let scheme = authorization.prefix(7)
        guard scheme.count == 7, scheme.lowercased() == "bearer " else { return .unauthenticated(.malformed) }
        return try await authenticateAccessToken(String(authorization.dropFirst(7)))
    }

    /// Authenticates the `Authorization` field of a request; see ``authenticateBearer(authorization:)``.
    public func authenticateBearer(headers: HeaderFields) async throws -> Authentication {
        let values = headers.values(for: "Authorization")
        guard values.count <= 1 else { return .unauthenticated(.ambiguous) }
        return try await authenticateBearer(authorization: values.first)
    }

    /// Authenticates a bare access token.
    ///
    /// Valid when the token exists, neither it nor its grant has expired, the grant is not revoked and
    /// the account is active.
    public func authenticateAccessToken(_ value: String) async throws -> Authentication {
        guard let token = OpaqueToken(presented: value, as: .accessToken) else { return .unauthenticated(.malformed) }
        guard let lookup = try await accessToken(token.digest) else { return .unauthenticated(.notFound) }
        return try await authenticate(lookup.grant, expiresAt: lookup.token.expiresAt)
    }

    private func authenticate(_ grant: Grant, expiresAt: Date) async throws -> Authentication {
        let now = timeSource.now()
        guard grant.revocation == nil else { return .unauthenticated(.revoked) }
        guard now < expiresAt, now < grant.expiresAt else { return .unauthenticated(.expired) }
        guard try await status(of: grant.account) == .active else {
            return .unauthenticated(.accountInactive)
        }
        return .authenticated(
            AuthenticatedGrant(
                grant: grant.id,
                account: grant.account,
                client: grant.client,
                scope: grant.scope,
                expiresAt: min(expiresAt, grant.expiresAt)
            )
        )
    }
}
