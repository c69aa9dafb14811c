// SPDX-License-Identifier: Apache-2.0

import TilecastAuthVerification

/// `tilecast-auth faults`: fails every store call of every flow in turn and reports what happened.
struct FaultsCommand: Subcommand {
    static let usage = """
        usage: tilecast-auth faults

        Fails every store call of every flow in turn and checks each answer, the store and a retry.
        """

    init(arguments: [String]) throws(UsageError) {
        try Self.requireNoArguments(arguments)
    }

    func run() async -> Bool {
        let results = await FaultSweep.run()
        var faults = 0
        var violations = 0
        for result in results {
            faults += result.faults
            violations += result.violations.count
            print("\(result.violations.isEmpty ? "ok  " : "FAIL") \(result.flow): \(result.faults) faults injected")
            for violation in result.violations {
                print("        \(violation)")
            }
        }
        print("faults: \(results.count) flows, \(faults) faults injected, \(violations) violations")
        return violations == 0
    }
}
