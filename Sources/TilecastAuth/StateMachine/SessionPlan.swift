// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Studio session the state machine decided to start for a grant.
struct SessionPlan: Equatable {
    var grant: GrantID
    var now: Date
    var expiresAt: Date

    /// The session record for the minted session id.
    func session(_ minted: OpaqueToken) -> StudioSession {
        StudioSession(digest: minted.digest, grant: grant, startedAt: now, expiresAt: expiresAt)
    }
}
