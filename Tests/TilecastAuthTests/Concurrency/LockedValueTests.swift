// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct LockedValueTests {
    final class Tracked: Sendable {}

    /// The value lives in memory the lock allocates and frees itself: freeing it without deinitializing
    /// the value would leak whatever the value holds.
    @Test("The value is released with the lock, and not before")
    func valueIsReleasedWithTheLock() {
        weak var tracked: Tracked?
        var lock: LockedValue<[Tracked]>? = {
            let value = Tracked()
            tracked = value
            return LockedValue([value])
        }()
        #expect(tracked != nil)
        #expect(lock?.withLock { $0.count } == 1)
        lock = nil
        #expect(tracked == nil)
    }

    /// Real tasks on the cooperative pool's threads, each adding to the value many times: every addition
    /// is there at the end, as each runs alone inside the lock.
    @Test("Concurrent updates are each made alone")
    func concurrentUpdates() async {
        let lock = LockedValue(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 {
                        lock.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(lock.withLock { $0 } == 80_000)
    }
}
