// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuth
import TilecastAuthTesting

/// The store conformance kit, run against the in-memory store — and shown to fail a broken one.
struct StoreConformanceTests {
    private static let kit = StoreConformanceKit { clients in InMemoryGrantStore(clients: clients) }

    @Test("InMemoryGrantStore conforms", arguments: StoreConformanceCheck.all)
    func inMemoryStore(check: StoreConformanceCheck) async throws {
        try await Self.kit.run(check)
    }

    @Test("InMemoryGrantStore sized up front conforms", arguments: StoreConformanceCheck.all)
    func presizedInMemoryStore(check: StoreConformanceCheck) async throws {
        let kit = StoreConformanceKit { clients in InMemoryGrantStore(clients: clients, expectedLiveGrants: 4_096) }
        try await kit.run(check)
    }

    @Test("The kit has a check for every store operation and for concurrency")
    func coverage() {
        let names = StoreConformanceCheck.all.map(\.name).joined(separator: "\n")
        for operation in [
            "client", "redeemCode", "createGrant", "rotateRefreshToken", "replaceSession", "revokeGrant",
            "revokeGrants", "grants(of:)", "removeExpired", "concurrent redemptions", "concurrent rotations",
        ] {
            #expect(names.contains(operation), "no check mentions \(operation)")
        }
    }

    @Test("A store that redeems a code twice fails the kit")
    func brokenStoreFails() async throws {
        let kit = StoreConformanceKit(concurrency: 8) { clients in ForgetfulStore(InMemoryGrantStore(clients: clients))
        }
        let failures = await kit.runAll()
        let failed = Set(failures.map(\.check))
        #expect(failed.contains("redeemCode reports an already redeemed code with its grant and writes nothing"))
        #expect(failed.contains("concurrent redemptions of one code: exactly one succeeds"))
        #expect(failures.allSatisfy { !$0.message.isEmpty })
    }
}

/// A store that forgets codes are single-use — the mistake of oauthlib #618 and Authlib — to show the
/// kit catches it.
private struct ForgetfulStore: GrantStore {
    let base: InMemoryGrantStore

    init(_ base: InMemoryGrantStore) {
        self.base = base
    }

    func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws -> CodeRedemption {
        guard let code = try await base.authorizationCode(digest), now < code.expiresAt else { return .notFound }
        try await base.createGrant(issuance)
        return .redeemed
    }

    func client(_ id: ClientID) async throws -> Client? { try await base.client(id) }
    func insertCode(_ code: AuthorizationCode) async throws { try await base.insertCode(code) }
    func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        try await base.authorizationCode(digest)
    }
    func createGrant(_ issuance: GrantIssuance) async throws { try await base.createGrant(issuance) }
    func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try await base.refreshToken(digest)
    }
    func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        try await base.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            at: now
        )
    }
    func replaceSession(of grant: GrantID, with session: StudioSession, at now: Date) async throws -> SessionReplacement
    {
        try await base.replaceSession(of: grant, with: session, at: now)
    }
    func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        try await base.revokeGrant(id, reason: reason, at: now)
    }
    func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        try await base.revokeGrants(of: account, reason: reason, at: now)
    }
    func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? { try await base.accessToken(digest) }
    func session(_ digest: SecretDigest) async throws -> SessionLookup? { try await base.session(digest) }
    func grant(_ id: GrantID) async throws -> Grant? { try await base.grant(id) }
    func grants(of account: AccountID) async throws -> [Grant] { try await base.grants(of: account) }
    func removeExpired(at now: Date) async throws -> Int { try await base.removeExpired(at: now) }
}
