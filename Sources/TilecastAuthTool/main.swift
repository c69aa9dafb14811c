// SPDX-License-Identifier: Apache-2.0

import Foundation

/// `tilecast-auth <subcommand>`: tools around the TilecastAuth library.
let subcommands: [(name: String, type: any Subcommand.Type, summary: String)] = [
    (
        "demo", Demo.self,
        "walk one user through the whole lifecycle against the in-memory store,\n                printing every HTTP exchange (secrets shortened)"
    ),
    ("conformance", ConformanceCommand.self, "run conformance scenarios against the engine"),
    ("soak", SoakCommand.self, "model-based randomized testing for a given time"),
    ("faults", FaultsCommand.self, "fail every store call of every flow in turn, and check each outcome"),
    ("bench", BenchCommand.self, "measure the engine's operations (run with `swift run -c release`)"),
    (
        "postgres-race", PostgresRaceCommand.self,
        "several processes race one code and one refresh token on PostgreSQL;\n                exactly one of each may win (needs the trait PostgreSQL)"
    ),
]
let usage = """
    usage: tilecast-auth <subcommand> [arguments]   (tilecast-auth <subcommand> --help for its arguments)

    subcommands:
    \(subcommands.map { "  \($0.name.padding(toLength: 12, withPad: " ", startingAt: 0))  \($0.summary)" }.joined(separator: "\n"))
      help          show this text
    """

/// Runs one subcommand with its arguments and exits with its status.
func run(_ type: any Subcommand.Type, name: String, arguments: [String]) async -> Never {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(type.usage)
        exit(0)
    }
    do {
        var command = try type.init(arguments: arguments)
        exit(await command.run() ? 0 : 1)
    } catch {
        FileHandle.standardError.write("tilecast-auth \(name): \(error)\n\n\(type.usage)\n")
        exit(64)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "help", "--help", "-h":
    print(usage)
case let name? where subcommands.contains(where: { $0.name == name }):
    let type = subcommands.first { $0.name == name }!.type
    await run(type, name: name, arguments: Array(arguments.dropFirst()))
case let other?:
    FileHandle.standardError.write("tilecast-auth: unknown subcommand '\(other)'\n\n\(usage)\n")
    exit(64)
case nil:
    FileHandle.standardError.write(usage + "\n")
    exit(64)
}
