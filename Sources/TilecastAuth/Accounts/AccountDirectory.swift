// SPDX-License-Identifier: Apache-2.0

/// The embedding server's source of account status.
///
/// TilecastAuth does not own accounts; it asks before it consumes a code, rotates a refresh token or
/// authenticates a token or session. An account the directory does not know is ``AccountStatus/inactive``.
public protocol AccountDirectory: Sendable {
    /// The account's current status. Throw only for infrastructure failure; the engine then answers 503
    /// and changes nothing.
    func status(of account: AccountID) async throws -> AccountStatus
}
