// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The identifier of a grant: the family of everything issued from one authorization code.
///
/// A random (version 4) UUID. It is not a secret — it names a grant in logs, security events and
/// administrative calls — and holding it grants nothing.
public struct GrantID: RawRepresentable, Hashable, Sendable {
    public let rawValue: UUID

    public init(rawValue: UUID) {
        self.rawValue = rawValue
    }

    /// Mints a version 4 UUID from `randomSource`.
    init(randomSource: some RandomSource) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { randomSource.fill($0) }
        bytes.6 = (bytes.6 & 0x0F) | 0x40  // version 4 (RFC 9562 §5.4)
        bytes.8 = (bytes.8 & 0x3F) | 0x80  // variant 10
        self.rawValue = UUID(uuid: bytes)
    }
}

extension GrantID: CustomStringConvertible {
    public var description: String { rawValue.uuidString.lowercased() }
}
