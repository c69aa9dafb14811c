// SPDX-License-Identifier: Apache-2.0

import TilecastAuth

/// Keeps every security event as printed, to check that none shows a secret.
final class ScenarioEventLog: SecurityEventObserver, Sendable {
    private let lines = LockedValue<[String]>([])

    func observe(_ event: SecurityEvent) {
        let text = String(describing: event) + " " + String(reflecting: event)
        lines.withLock { $0.append(text) }
    }

    var printed: [String] { lines.withLock { $0 } }
}
