// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension AuthEngine {
    /// Issues an authorization code once the user has approved — the authorize step's last act.
    ///
    /// The code is bound to the client, the redirect URI, the S256 challenge and the scope
    /// (RFC 6749 §4.1.2, RFC 7636 §4.4); only its digest is stored. PKCE is mandatory and S256 the only
    /// method (RFC 8252 §6, RFC 9700 §2.1.1).
    ///
    /// - Parameters:
    ///   - account: The signed-in account that approved the request.
    ///   - clientID: The `client_id` of the authorization request.
    ///   - redirectURI: The `redirect_uri`; must be one the client registered, byte for byte.
    ///   - codeChallenge: The `code_challenge`: base64url of a SHA-256 digest, 43 characters.
    ///   - codeChallengeMethod: The `code_challenge_method`; must be `S256`. A missing method means
    ///     `plain` (RFC 7636 §4.3) and is refused.
    ///   - scope: The approved scope; every token must be allowed for the client.
    ///   - authenticatedAt: When the user proved who they are for this approval, if before this call;
    ///     the engine's clock by default. It becomes the code's ``AuthorizationCode/issuedAt``, so a code
    ///     approved before its account's grants were all revoked (``revokeAllGrants(of:)``) is never
    ///     redeemed. A time later than the engine's clock counts as the clock's; the code's lifetime runs
    ///     from the clock.
    /// - Returns: The code and its expiry.
    /// - Throws: ``IssuanceError``; see ``IssuanceError/mayRedirect`` for how to answer.
    ///
    /// The challenge, its method and the scope are the authorization request's parameters as received,
    /// strings on purpose: checking them — a missing challenge, a method other than `S256`, a challenge
    /// that is not 43 base64url characters, a scope outside the grammar or the client's tokens — and
    /// choosing the error each one gets (RFC 6749 §4.1.2.1, RFC 7636 §4.4.1) is the library's job, so the
    /// authorize endpoint passes them through untouched rather than parsing them into types first.
    public func issueCode(
        account: AccountID,
        client clientID: ClientID,
        redirectURI: String,
        codeChallenge: String?,
        codeChallengeMethod: String?,
        scope: String,
        authenticatedAt: Date? = nil
    ) async throws(IssuanceError) -> IssuedCode {
        let client = try await registeredClient(clientID)
        guard client.redirectURIs.contains(where: { ASCII.equal($0, redirectURI) }) else {
            throw .unregisteredRedirectURI
        }
        guard let codeChallenge, !codeChallenge.isEmpty else { throw .missingCodeChallenge }
        guard let codeChallengeMethod, ASCII.equal(codeChallengeMethod, "S256") else {
            throw .unsupportedCodeChallengeMethod
        }
        let challenge = CodeChallenge(method: .s256, value: codeChallenge)
        guard challenge.s256Digest != nil else { throw .malformedCodeChallenge }
        let grantedScope = try allowedScope(scope, for: client)
        try await requireActive(account)

        let now = timeSource.now()
        let code = OpaqueToken.mint(.authorizationCode, using: randomSource)
        let expiresAt = now.addingTimeInterval(configuration.lifetimes.authorizationCode.timeInterval)
        let record = AuthorizationCode(
            digest: code.digest,
            client: client.id,
            account: account,
            redirectURI: redirectURI,
            scope: grantedScope,
            challenge: challenge,
            issuedAt: min(authenticatedAt ?? now, now),
            expiresAt: expiresAt
        )
        do {
            try await store.insertCode(record)
        } catch {
            throw .backendFailed(error)
        }
        return IssuedCode(code: code, expiresAt: expiresAt)
    }

    /// Creates a grant directly, for a client whose own flow the embedding server runs — the Studio web
    /// login for `tilecast-web`, a device flow for `tilecast-cli`.
    ///
    /// The grant has the same shape as one from a code exchange: an access token, the first refresh token
    /// of its lineage and, when `startsSession` is true, a Studio session. Its tokens are refused by the
    /// ios-session endpoint unless `client` is the served client.
    ///
    /// - Parameters:
    ///   - account: The account that signed in.
    ///   - clientID: The client the grant is for; it must be registered with the store.
    ///   - scope: The approved scope; every token must be allowed for the client.
    ///   - startsSession: Whether the grant starts with a Studio session (and its cookie).
    ///   - authenticatedAt: When the user proved who they are for this sign-in — the password check, the
    ///     approval of a device code — if that was before this call; the engine's clock by default. A
    ///     grant whose account had all its grants revoked (``revokeAllGrants(of:)``) at or after this time
    ///     is refused with ``IssuanceError/accountRevoked``: a device approved with the old password does
    ///     not get a grant by polling after the password changed. A time later than the engine's clock
    ///     counts as the clock's.
    /// - Returns: The grant with its credential and, when `startsSession`, its cookie.
    /// - Throws: ``IssuanceError``.
    public func createGrant(
        account: AccountID,
        client clientID: ClientID,
        scope: String,
        startsSession: Bool,
        authenticatedAt: Date? = nil
    ) async throws(IssuanceError) -> IssuedGrant {
        let client = try await registeredClient(clientID)
        let grantedScope = try allowedScope(scope, for: client)
        try await requireActive(account)

        let plan = GrantPlan(
            client: client.id,
            account: account,
            scope: grantedScope,
            now: timeSource.now(),
            lifetimes: settings.lifetimes,
            issuesNativeCredential: true
        )
        let minted = MintedGrant.mint(nativeCredential: true, using: randomSource)
        let creation: GrantCreation
        do {
            var issuance = plan.issuance(minted, startsSession: startsSession)
            issuance.authenticatedAt = min(authenticatedAt ?? plan.now, plan.now)
            creation = try await store.createGrant(issuance)
        } catch {
            throw .backendFailed(error)
        }
        guard creation == .created else { throw .accountRevoked }
        report(.grantCreated(grant: minted.grant, client: client.id, account: account))
        guard let credential = plan.credential(minted) else {
            preconditionFailure("a grant minted with a native credential has a credential")
        }
        var cookie: SessionCookie?
        if startsSession {
            report(.sessionStarted(grant: minted.grant))
            cookie = plan.cookie(minted, configuration: configuration.cookie)
        }
        return IssuedGrant(grant: minted.grant, credential: credential, cookie: cookie)
    }

    /// Revokes a grant with everything hanging off it — its access tokens, its refresh-token lineage and
    /// its Studio session (RFC 7009 §2.1). Use it when the user removes the app from their account, an
    /// administrator acts, or the password changes (RFC 9700 §4.14.2).
    ///
    /// - Throws: The store's error; nothing was changed.
    public func revokeGrant(_ grant: GrantID) async throws -> GrantRevocation {
        let outcome = try await store.revokeGrant(grant, reason: .revokedByServer, at: timeSource.now())
        if case .revoked = outcome {
            report(.grantRevoked(grant: grant, reason: .revokedByServer))
        }
        return outcome
    }

    /// Signs a Studio session out by its cookie value, which revokes the session's grant — its access
    /// tokens and refresh tokens too. Signing the session out revokes the grant; that is the endpoint's
    /// contract, and what users mean by signing out (compare Hydra, whose logout leaves tokens valid).
    ///
    /// Send ``SessionCookie/deletion(configuration:)`` in the sign-out response to clear the browser's
    /// cookie.
    ///
    /// - Throws: The store's error; nothing was changed.
    public func signOut(sessionCookieValue: String) async throws -> SignOutOutcome {
        guard let token = OpaqueToken(presented: sessionCookieValue, as: .studioSession),
            let lookup = try await store.session(token.digest), lookup.grant.session == token.digest
        else {
            return .notSignedIn
        }
        let now = timeSource.now()
        guard now < lookup.session.expiresAt else { return .notSignedIn }
        return try await revoke(lookup.grant.id, because: .signedOut, at: now)
    }

    /// Revokes a grant for a sign-out and reports it.
    private func revoke(_ grant: GrantID, because reason: RevocationReason, at now: Date) async throws -> SignOutOutcome
    {
        switch try await store.revokeGrant(grant, reason: reason, at: now) {
        case .revoked:
            report(.grantRevoked(grant: grant, reason: reason))
            return .signedOut(grant: grant)
        case .alreadyRevoked:
            return .signedOut(grant: grant)
        case .notFound:
            return .notSignedIn
        }
    }

    /// Signs the native app out by one of its tokens — an access token or the current refresh token —
    /// revoking the grant with its session (RFC 7009 §2.1: revoking a refresh token should invalidate
    /// the access tokens of the same grant). The app calls this when the user signs out in the app, since
    /// it cannot reach the session cookie inside its web view.
    ///
    /// A token of a client other than `client` is refused untouched (RFC 7009 §2.1: the token must have
    /// been issued to the client asking), as is an expired one. A refresh token that was already rotated
    /// — other than the previous token retried within the reuse leeway — is **reuse**, exactly as at the
    /// endpoint (RFC 9700 §4.14.2): the grant is revoked as reused and
    /// ``SecurityEvent/refreshTokenReuseDetected(grant:peerAddress:)`` is raised, so whoever holds a stolen
    /// old token cannot end the grant without setting off reuse alerting. The outcome is still
    /// ``SignOutOutcome/signedOut(grant:)``: the grant is revoked either way.
    ///
    /// - Parameters:
    ///   - value: The access token or refresh token the app holds.
    ///   - client: The `client_id` the app presents; a token of another client signs nothing out.
    ///   - peerAddress: The caller's address, as for ``handle(request:)``, for the reuse event.
    /// - Throws: The store's error; nothing was changed.
    public func signOut(
        token value: String,
        client: ClientID,
        peerAddress: String? = nil
    ) async throws
        -> SignOutOutcome
    {
        let now = timeSource.now()
        let grant: Grant
        let expiresAt: Date
        var reused = false
        if let token = OpaqueToken(presented: value, as: .refreshToken),
            let lookup = try await store.refreshToken(token.digest)
        {
            (grant, expiresAt) = (lookup.grant, lookup.token.expiresAt)
            reused =
                lookup.token.state != .active
                && !lookup.token.isRetryWithinLeeway(
                    of: lookup.grant,
                    at: now,
                    leeway: configuration.refreshTokenReuseLeeway
                )
        } else if let token = OpaqueToken(presented: value, as: .accessToken),
            let lookup = try await store.accessToken(token.digest)
        {
            (grant, expiresAt) = (lookup.grant, lookup.token.expiresAt)
        } else {
            return .notSignedIn
        }
        guard grant.client == client, now < expiresAt else { return .notSignedIn }
        guard reused, grant.isLive(at: now) else { return try await revoke(grant.id, because: .signedOut, at: now) }
        report(.refreshTokenReuseDetected(grant: grant.id, peerAddress: peerAddress))
        return try await revoke(grant.id, because: .refreshTokenReused, at: now)
    }

    /// Revokes every live grant of an account at once — when the password changes, or the account is
    /// suspended (RFC 9700 §4.14.2) — and ends every code the account has not redeemed yet.
    ///
    /// One atomic store operation, so no grant escapes by being created meanwhile: a code issued before
    /// the revocation is never redeemed after it, even one approved and kept back by someone who knew the
    /// old password, and a ``createGrant(account:client:scope:startsSession:authenticatedAt:)`` or code exchange running
    /// concurrently either completes first, and its grant is revoked with the others, or is refused.
    ///
    /// - Returns: The grants it revoked.
    /// - Throws: The store's error; nothing was changed.
    public func revokeAllGrants(of account: AccountID) async throws -> [GrantID] {
        let revoked = try await store.revokeGrants(of: account, reason: .revokedByServer, at: timeSource.now())
        for grant in revoked {
            report(.grantRevoked(grant: grant.id, reason: .revokedByServer))
        }
        return revoked.map(\.id)
    }

    /// Signs out the session whose cookie the request's `Cookie` fields carry; see
    /// ``signOut(sessionCookieValue:)``. Without exactly one such cookie, nothing changes.
    public func signOut(headers: HeaderFields) async throws -> SignOutOutcome {
        let values = CookieHeader.values(named: configuration.cookie.name, in: headers.values(for: "Cookie"))
        guard values.count == 1 else { return .notSignedIn }
        return try await signOut(sessionCookieValue: values[0])
    }

    /// Every grant of an account, revoked and expired ones included, oldest first — for an account page
    /// that lists the apps signed in and lets the user revoke them.
    public func grants(of account: AccountID) async throws -> [Grant] {
        try await store.grants(of: account)
    }

    // MARK: Helpers

    private func registeredClient(_ id: ClientID) async throws(IssuanceError) -> Client {
        let client: Client?
        do {
            client = try await store.client(id)
        } catch {
            throw .backendFailed(error)
        }
        guard let client else { throw .unknownClient }
        return client
    }

    private func allowedScope(_ text: String, for client: Client) throws(IssuanceError) -> Scope {
        guard let scope = Scope(text), scope.tokens.allSatisfy({ client.allowedScopeTokens.contains(String($0)) })
        else {
            throw .invalidScope
        }
        return scope
    }

    private func requireActive(_ account: AccountID) async throws(IssuanceError) {
        let status: AccountStatus
        do {
            status = try await accounts.status(of: account)
        } catch {
            throw .backendFailed(error)
        }
        guard status == .active else { throw .accountInactive }
    }
}
