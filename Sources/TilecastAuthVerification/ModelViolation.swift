// SPDX-License-Identifier: Apache-2.0

/// A disagreement between the engine and the reference model, or a broken invariant.
public struct ModelViolation: Error, Sendable, CustomStringConvertible {
    /// The index of the operation after which it was found.
    public let step: Int
    /// The operation.
    public let operation: ModelOperation
    /// What was wrong.
    public let message: String

    public var description: String { "step \(step) \(operation): \(message)" }
}
