// SPDX-License-Identifier: Apache-2.0

/// The server could not start.
public struct HTTPServerError: Error, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
