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
        events.compactMap { if case .grantRevoked(let grant, let reason) = $0 { (grant, reason) } else { nil } }
    }

    var refusals: [RefusalReason] {
        events.compactMap { if case .requestRefused(let error, _) = $0 { error.reason } else { nil } }
    }

    var codeReplays: [GrantID] {
        events.compactMap { if case .codeReplayDetected(let grant, _) = $0 { grant } else { nil } }
    }

    var reuses: [GrantID] {
        events.compactMap { if case .refreshTokenReuseDetected(let grant, _) = $0 { grant } else { nil } }
    }
}
