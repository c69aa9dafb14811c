// SPDX-License-Identifier: Apache-2.0

/// The behaviour shared by identifiers that wrap a string: ``ClientID`` and ``AccountID``.
///
/// Public only so the conforming types can use its implementations; not API.
///
/// Identifiers compare byte for byte, not by `String`'s canonical equivalence: `tilecast-ios` and a
/// look-alike spelled with other code points are different clients.
public protocol _StringIdentifier: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
where RawValue == String {
    init(rawValue: String)
}

extension _StringIdentifier {
    public init(_ rawValue: String) {
        self.init(rawValue: rawValue)
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        ASCII.equal(lhs.rawValue, rhs.rawValue)
    }

    public func hash(into hasher: inout Hasher) {
        rawValue.withLentUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    public var description: String { rawValue }
}
