// SPDX-License-Identifier: Apache-2.0

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
                taken = preparation.take(size: round)
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
        #expect(preparation.take(size: 1) == nil)
        // The mismatched take dropped the ready buffer: nothing is left for the right size either.
        #expect(preparation.take(size: 2) == nil)
        preparation.prepare(size: 2) { Box(2) }
        try await RecordTableTests.waitForPreparations { preparation.isSettled }
        #expect(preparation.take(size: 2)?.value == 2)
        #expect(preparation.take(size: 2) == nil)
        #expect(preparation.taken == 1)
    }
}
