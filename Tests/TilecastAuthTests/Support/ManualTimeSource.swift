// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization
import TilecastAuth

/// A clock that moves only when a test moves it.
final class ManualTimeSource: TimeSource, Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.current = Mutex(start)
    }

    func now() -> Date {
        current.withLock { $0 }
    }

    func advance(by seconds: Double) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
