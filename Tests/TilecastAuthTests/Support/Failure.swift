// SPDX-License-Identifier: Apache-2.0

/// A test failure with a message, thrown where a test cannot go on.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
