// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import TilecastAuth

/// A clock that moves only when a test moves it, so expiries are tested without sleeping.
public final class ManualTimeSource: TimeSource, Sendable {
    private let current: LockedValue<Date>

    /// Creates a clock stopped at `start` (by default 2027-01-15 08:00:00 UTC).
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.current = LockedValue(start)
    }

    public func now() -> Date {
        current.withLock { $0 }
    }

    /// Moves the clock forward (or, with a negative value, back) by `seconds`.
    public func advance(by seconds: Double) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
