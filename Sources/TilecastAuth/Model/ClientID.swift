// SPDX-License-Identifier: Apache-2.0

/// The identifier of an OAuth client (RFC 6749 §2.2), such as `tilecast-ios`. Compared byte for byte.
public struct ClientID: _StringIdentifier {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Tilecast for iOS, the public native client this endpoint serves.
    public static let tilecastIOS = ClientID("tilecast-ios")
}
