// SPDX-License-Identifier: Apache-2.0

/// A store that broke the `GrantStore` contract: which check, and what it saw.
public struct StoreConformanceFailure: Error, CustomStringConvertible {
    /// The check that failed.
    public let check: String
    /// What the store did that the contract forbids.
    public let message: String

    public var description: String { "\(check): \(message)" }
}
