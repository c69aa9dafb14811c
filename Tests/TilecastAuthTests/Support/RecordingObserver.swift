// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// Keeps every security event, for assertions.
final class RecordingObserver: SecurityEventObserver, Sendable {
    private let recorded = LockedValue<[SecurityEvent]>([])

    func observe(_ event: SecurityEvent) {
        recorded.withLock { $0.append(event) }
    }

    var events: [SecurityEvent] { recorded.withLock { $0 } }

    var revocations: [(GrantID, RevocationReason)] {
        events.compactMap { $0.kind == .grantRevoked ? ($0.grant!, $0.revocationReason!) : nil }
    }

    var refusals: [RefusalReason] {
        events.compactMap { $0.refusal?.reason }
    }

    var codeReplays: [GrantID] {
        events.compactMap { $0.kind == .codeReplayDetected ? $0.grant : nil }
    }

    var reuses: [GrantID] {
        events.compactMap { $0.kind == .refreshTokenReuseDetected ? $0.grant : nil }
    }
}
