// SPDX-License-Identifier: Apache-2.0

/// A subcommand of `tilecast-auth`.
protocol Subcommand {
    /// The usage text `--help` prints.
    static var usage: String { get }

    /// Reads the arguments that follow the subcommand's name.
    init(arguments: [String]) throws(UsageError)

    /// Does the work; returns whether it succeeded.
    mutating func run() async -> Bool
}

extension Subcommand {
    /// Refuses any argument, for subcommands that take none.
    static func requireNoArguments(_ arguments: [String]) throws(UsageError) {
        if let first = arguments.first {
            throw UsageError("unexpected argument \(first)")
        }
    }
}
