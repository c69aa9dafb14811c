// SPDX-License-Identifier: Apache-2.0

/// The embedding server's identifier for a user account. TilecastAuth never interprets it.
public struct AccountID: RawRepresentable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}

extension AccountID: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self.rawValue = value
    }
}

extension AccountID: CustomStringConvertible {
    public var description: String { rawValue }
}

extension AccountID: Hashable {
    /// Identifiers compare byte for byte, not by `String`'s canonical equivalence: `tilecast-ios` and a
    /// look-alike spelled with other code points are different clients.
    public static func == (lhs: AccountID, rhs: AccountID) -> Bool {
        lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        var bytes = rawValue
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
