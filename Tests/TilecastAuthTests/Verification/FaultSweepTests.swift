// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuthVerification

/// Every store call of every flow, failed in turn.
struct FaultSweepTests {
    @Test("A fault at any store call of any flow is a clean 503 or the documented outcome, with nothing half-done")
    func everyFaultIsClean() async {
        let results = await FaultSweep.run()
        #expect(results.count >= 8)
        for result in results {
            #expect(result.faults > 0, "\(result.flow) made no store call")
            #expect(result.violations.isEmpty, "\(result.flow): \(result.violations)")
        }
    }
}
