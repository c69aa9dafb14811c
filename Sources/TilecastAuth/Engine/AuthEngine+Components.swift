// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The calls the checks on later requests make to the engine's components.
///
/// Each goes straight to the in-memory component's operation when the engine has that one — it takes a
/// lock and returns, so there is nothing to wait for — and through the protocol otherwise. An `async`
/// call through an existential allocated a frame in the task for the callee and, on return, asked the
/// task for its executor again. Marked `@inline(__always)`, so that the choice costs no call of its own.
/// An exchange makes the same choice action by action (`AuthEngine+Exchange.swift`).
extension AuthEngine {
    @inline(__always)
    func status(of account: AccountID) async throws -> AccountStatus {
        if let directory = inMemoryAccounts {
            return directory.statusNow(of: account)
        }
        return try await accounts.status(of: account)
    }

    @inline(__always)
    func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        if let memory = inMemoryStore {
            return memory.sessionNow(digest)
        }
        return try await store.session(digest)
    }

    @inline(__always)
    func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        if let memory = inMemoryStore {
            return memory.accessTokenNow(digest)
        }
        return try await store.accessToken(digest)
    }
}
