// SPDX-License-Identifier: Apache-2.0

/// The embedding server's identifier for a user account. TilecastAuth never interprets it; it is
/// compared byte for byte.
public struct AccountID: _StringIdentifier {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}
