// SPDX-License-Identifier: Apache-2.0

/// A step of the demo that could not go on.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
