// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuthVerification

/// Every store call of every flow, failed in turn.
struct FaultSweepTests {
    @Test(
        "A fault at any store call of any flow, on a reading or a remembering instance, is a clean 503 or the documented outcome, with nothing half-done"
    )
    func everyFaultIsClean() async {
        let results = await FaultSweep.run()
        #expect(results.count >= 25)
        // Every flow on both kinds of instance, and the lost commits compared between them.
        #expect(results.filter { $0.flow.hasSuffix("on an instance reading every record") }.count >= 10)
        #expect(results.filter { $0.flow.hasSuffix("on an instance remembering what it wrote") }.count >= 10)
        #expect(results.filter { $0.flow.contains("commit lost") }.count >= 5)
        #expect(results.filter { $0.flow.contains("backend unavailable") }.count >= 5)
        for result in results {
            #expect(result.faults > 0, "\(result.flow) made no store call")
            #expect(result.violations.isEmpty, "\(result.flow): \(result.violations)")
        }
    }
}
