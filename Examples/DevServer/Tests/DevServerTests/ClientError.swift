// SPDX-License-Identifier: Apache-2.0

/// A step of the flow went wrong; the message says which.
struct ClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
