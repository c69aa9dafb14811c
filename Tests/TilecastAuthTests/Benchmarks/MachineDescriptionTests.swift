// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import TilecastAuthBenchmarks

/// The machine a benchmark run names, read from the texts of `/proc`.
struct MachineDescriptionTests {
    /// Two processors' entries as Linux writes them (tabs before the colons), the second of another model.
    private static let cpuinfo = """
        processor\t: 0
        vendor_id\t: AuthenticAMD
        cpu family\t: 25
        model\t\t: 1
        model name\t: AMD EPYC
        stepping\t: 1

        processor\t: 1
        vendor_id\t: AuthenticAMD
        cpu family\t: 26
        model\t\t: 17
        model name\t: another name

        """

    private static let stat = """
        cpu  18 0 7 900 0 0 0 0 0 0
        intr 1 2 3
        btime 1796332114
        processes 4242

        """

    @Test("The first processor's name, family and model; the boot's identifier and time")
    func readsProcFiles() {
        let machine = MachineDescription.parse(
            cpuinfo: Self.cpuinfo,
            stat: Self.stat,
            bootID: "f7d63fed-ca02-4d09-8e93-6e27457ee0f3\n",
            processors: 2
        )
        #expect(machine.processor == "AMD EPYC")
        #expect(machine.family == 25)
        #expect(machine.model == 1)
        #expect(machine.processors == 2)
        #expect(machine.bootID == "f7d63fed-ca02-4d09-8e93-6e27457ee0f3")
        #expect(machine.bootedAt == Date(timeIntervalSince1970: 1_796_332_114))
        #expect(
            machine.outputLine
                == "bench machine processor=\"AMD EPYC\" family=25 model=1 processors=2 "
                + "boot_id=f7d63fed-ca02-4d09-8e93-6e27457ee0f3 booted_at=2026-12-03T21:08:34Z"
        )
    }

    @Test("What cannot be read is unknown, not made up: the processor `unknown`, every other field `-`")
    func unreadableFieldsAreUnknown() {
        let machine = MachineDescription.parse(cpuinfo: "", stat: "btime soon\n", bootID: "  \n", processors: 1)
        #expect(
            machine
                == MachineDescription(
                    processor: "unknown",
                    family: nil,
                    model: nil,
                    processors: 1,
                    bootID: nil,
                    bootedAt: nil
                )
        )
        #expect(
            machine.outputLine
                == "bench machine processor=\"unknown\" family=- model=- processors=1 boot_id=- booted_at=-"
        )
    }

    @Test("This machine: a line the docs can quote, with the processors this process may use")
    func describesThisMachine() {
        let machine = MachineDescription.here()
        #expect(machine.processors == ProcessInfo.processInfo.activeProcessorCount)
        #expect(machine.outputLine.hasPrefix("bench machine processor=\""))
        #if os(Linux)
        #expect(machine.processor != "unknown")
        #expect(machine.bootID != nil)
        #expect(machine.bootedAt.map { $0 < Date() } == true)
        #endif
    }
}
