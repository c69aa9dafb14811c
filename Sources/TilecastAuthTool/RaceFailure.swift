// SPDX-License-Identifier: Apache-2.0

/// A racing child process that failed, with what it printed.
struct RaceFailure: Error, CustomStringConvertible {
    let output: String
    var description: String { "a racing process failed: \(output)" }
}
