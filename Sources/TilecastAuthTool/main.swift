// SPDX-License-Identifier: Apache-2.0

import Foundation

/// `tilecast-auth <subcommand>`: tools around the TilecastAuth library.
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: tilecast-auth <subcommand>

    subcommands:
      demo          walk one user through the whole lifecycle against the in-memory store,
                    printing every HTTP exchange (secrets shortened)
      conformance   run conformance scenarios against the engine (see `conformance --help`)
      soak          model-based randomized testing for a given time (see `soak --help`)
      faults        fail every store call of every flow in turn, and check each outcome
      help          show this text
    """

switch arguments.first {
case "demo":
    var demo = Demo()
    exit(await demo.run() ? 0 : 1)
case "conformance":
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        print(ConformanceCommand.usage)
        exit(0)
    }
    do {
        let command = try ConformanceCommand(arguments: rest)
        exit(await command.run() ? 0 : 1)
    } catch {
        FileHandle.standardError.write("tilecast-auth conformance: \(error)\n\n\(ConformanceCommand.usage)\n")
        exit(64)
    }
case "soak":
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        print(SoakCommand.usage)
        exit(0)
    }
    do {
        let command = try SoakCommand(arguments: rest)
        exit(await command.run() ? 0 : 1)
    } catch {
        FileHandle.standardError.write("tilecast-auth soak: \(error)\n\n\(SoakCommand.usage)\n")
        exit(64)
    }
case "faults":
    exit(await FaultsCommand.run() ? 0 : 1)
case "help", "--help", "-h":
    print(usage)
case .some(let other):
    FileHandle.standardError.write("tilecast-auth: unknown subcommand '\(other)'\n\n\(usage)\n")
    exit(64)
case nil:
    FileHandle.standardError.write(usage + "\n")
    exit(64)
}
