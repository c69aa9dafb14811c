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

    /// Whether this id sorts before `other` in the order of their text, which is also the order of
    /// PostgreSQL's `uuid` type: the text is the sixteen bytes in hexadecimal, each in two digits and
    /// the hyphens in fixed places, so comparing texts compares the bytes from the first, and this
    /// compares the bytes. Formatting the text instead cost about 1 µs per id (`snprintf` for each byte),
    /// more than listing an account's grants took otherwise.
    package func sortsBefore(_ other: GrantID) -> Bool {
        orderingHalves < other.orderingHalves
    }

    /// The sixteen bytes as two numbers, the first eight bytes the more significant.
    private var orderingHalves: (UInt64, UInt64) {
        withUnsafeBytes(of: rawValue.uuid) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }
}

extension GrantID: CustomStringConvertible {
    public var description: String { rawValue.uuidString.lowercased() }
}
