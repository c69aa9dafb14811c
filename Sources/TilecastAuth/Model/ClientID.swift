// SPDX-License-Identifier: Apache-2.0

/// The identifier of an OAuth client (RFC 6749 §2.2), such as `tilecast-ios`.
public struct ClientID: RawRepresentable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Tilecast for iOS, the public native client this endpoint serves.
    public static let tilecastIOS = ClientID("tilecast-ios")
}

extension ClientID: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self.rawValue = value
    }
}

extension ClientID: CustomStringConvertible {
    public var description: String { rawValue }
}

extension ClientID: Hashable {
    /// Identifiers compare byte for byte, not by `String`'s canonical equivalence: `tilecast-ios` and a
    /// look-alike spelled with other code points are different clients.
    public static func == (lhs: ClientID, rhs: ClientID) -> Bool {
        lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        var bytes = rawValue
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
