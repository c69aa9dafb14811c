// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import TilecastAuth

struct BufferPreparationTests {
    final class Box: Sendable {
        let value: Int

        init(_ value: Int) {
            self.value = value
        }
    }

    @Test("A buffer is taken with no other reference to it, however close to its preparation the take comes")
    func takenBufferIsUniquelyReferenced() async throws {
        // A table writes a taken buffer in place; a second reference — one the background thread held a
        // moment too long — would make that first write copy it (a chunk) or rebuild it (an index).
        let preparation = BufferPreparation<Box>()
        var shared = 0
        let rounds = 20_000
        for round in 0..<rounds {
            preparation.prepare(size: round) { Box(round) }
            var taken: Box?
            let deadline = ContinuousClock.now + .seconds(10)
            while taken == nil {
                taken = preparation.take(size: round, abandoningLate: false)
                try #require(ContinuousClock.now < deadline, "a preparation finished within 10 s")
            }
            if !isKnownUniquelyReferenced(&taken!) {
                shared += 1
            }
            #expect(taken!.value == round)
        }
        #expect(shared == 0, "\(shared) of \(rounds) taken buffers had another reference")
        #expect(preparation.taken == rounds)
    }

    @Test("A ready buffer of another size is dropped, not handed out, and a new one is made")
    func sizesMustMatch() async throws {
        let preparation = BufferPreparation<Box>()
        preparation.prepare(size: 1) { Box(1) }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        // Ready with size 1: asking for size 2 replaces it.
        preparation.prepare(size: 2) { Box(2) }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        #expect(preparation.take(size: 1, abandoningLate: false) == nil)
        // The mismatched take dropped the ready buffer: nothing is left for the right size either.
        #expect(preparation.take(size: 2, abandoningLate: false) == nil)
        preparation.prepare(size: 2) { Box(2) }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        #expect(preparation.take(size: 2, abandoningLate: false)?.value == 2)
        #expect(preparation.take(size: 2, abandoningLate: false) == nil)
        #expect(preparation.taken == 1)
    }

    /// A box that counts its own deinitialization, to show a buffer was freed and not held.
    final class Tracked: Sendable {
        let freed: LockedValue<Int>

        init(_ freed: LockedValue<Int>) {
            self.freed = freed
        }

        deinit {
            freed.withLock { $0 += 1 }
        }
    }

    @Test("A preparation the taker gave up on is freed when it finishes, not held until the next request")
    func abandonedPreparationIsFreed() async throws {
        // An index that grew without its prepared buckets, or a first chunk that grew without its larger
        // buffer, will ask for another size next: the late buffer would otherwise sit ready, megabytes of
        // resident memory, until then.
        let preparation = BufferPreparation<Tracked>()
        let freed = LockedValue(0)
        let gaveUp = LockedValue(false)
        preparation.prepare(size: 1) {
            // Given up while certainly under way: from inside the job, which runs outside the lock. (A test
            // that held the job until its own task ran again would hold the queue every store shares.)
            let taken = preparation.take(size: 1, abandoningLate: true)
            gaveUp.withLock { $0 = taken == nil }
            return Tracked(freed)
        }
        try await RecordTableTests.waitForPreparations { freed.withLock { $0 } == 1 }
        #expect(gaveUp.withLock { $0 })
        #expect(preparation.take(size: 1, abandoningLate: false) == nil)
        #expect(preparation.taken == 0)
        // And the preparation is free for the next request at once.
        preparation.prepare(size: 2) { Tracked(freed) }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        #expect(preparation.take(size: 2, abandoningLate: false) != nil)
    }

    @Test("A late preparation the taker keeps is there for its next request of the same size")
    func keptPreparationServesTheNextRequest() async throws {
        // A table's next chunk: when it comes too late for the chunk it was made for, it is the right
        // size for the one after.
        let preparation = BufferPreparation<Box>()
        let gate = LockedValue(false)
        preparation.prepare(size: 1) {
            while !gate.withLock({ $0 }) { usleep(1_000) }
            return Box(1)
        }
        #expect(preparation.take(size: 1, abandoningLate: false) == nil)
        gate.withLock { $0 = true }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        #expect(preparation.take(size: 1, abandoningLate: false)?.value == 1)
    }

    @Test("A request for another size while one is being made replaces it: the first is freed when done")
    func laterRequestSupersedes() async throws {
        let preparation = BufferPreparation<Tracked>()
        let freed = LockedValue(0)
        preparation.prepare(size: 1) {
            // Replaced while certainly under way, from inside the job (see `abandonedPreparationIsFreed`).
            preparation.prepare(size: 2) { Tracked(freed) }
            return Tracked(freed)
        }
        try await RecordTableTests.waitForPreparations { freed.withLock { $0 } == 1 }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        #expect(preparation.take(size: 2, abandoningLate: false) != nil)
        #expect(preparation.take(size: 1, abandoningLate: false) == nil)
    }
}

extension BufferPreparationTests {
    @Test("A job given up or replaced before it starts makes nothing; the preparation is settled once it is done")
    func unwantedJobMakesNothing() async throws {
        let blocker = BufferPreparation<Box>()
        let gate = LockedValue(false)
        blocker.prepare(size: 0) {
            while !gate.withLock({ $0 }) { usleep(1_000) }
            return Box(0)
        }
        // Queued behind the blocker on the one background queue: replaced, then given up.
        let preparation = BufferPreparation<Box>()
        let made = LockedValue([Int]())
        preparation.prepare(size: 1) {
            made.withLock { $0.append(1) }
            return Box(1)
        }
        preparation.prepare(size: 2) {
            made.withLock { $0.append(2) }
            return Box(2)
        }
        #expect(preparation.take(size: 2, abandoningLate: true) == nil)
        #expect(!preparation.isSettled)
        gate.withLock { $0 = true }
        try await RecordTableTests.waitForPreparations { preparation.isSettled && blocker.isSettled }
        #expect(made.withLock { $0 }.isEmpty)
    }
}
