// SPDX-License-Identifier: Apache-2.0

/// A scenario file that does not follow the format (`Docs/Conformance/README.md`).
public struct ScenarioFormatError: Error, CustomStringConvertible {
    /// Where in the file, as a path such as `steps.3.expect.status`.
    public let path: String
    /// What is wrong.
    public let message: String

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
