// SPDX-License-Identifier: Apache-2.0

/// Why an ``InMemoryGrantStore`` refused a call by throwing, having written nothing.
///
/// A struct with static members rather than an enum, so a later release can add a reason without
/// breaking a caller's `switch`; compare with `==`.
public struct InMemoryGrantStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the refused call named that was already stored, as the description says it.
    private let record: String

    private init(_ record: String) {
        self.record = record
    }

    /// The call named a key — a code's, token's or session's digest, a grant's id — that a stored record
    /// already has. Every key is a fresh random value, so this is a caller's mistake (or a broken random
    /// source); replacing the stored record would hand it to another grant. The PostgreSQL store's unique
    /// keys refuse the same calls.
    public static let codeAlreadyStored = InMemoryGrantStoreError("an authorization code")
    /// See ``codeAlreadyStored``.
    public static let grantAlreadyStored = InMemoryGrantStoreError("a grant")
    /// See ``codeAlreadyStored``.
    public static let accessTokenAlreadyStored = InMemoryGrantStoreError("an access token")
    /// See ``codeAlreadyStored``.
    public static let refreshTokenAlreadyStored = InMemoryGrantStoreError("a refresh token")
    /// See ``codeAlreadyStored``.
    public static let sessionAlreadyStored = InMemoryGrantStoreError("a Studio session")

    /// Names the kind of record, never its key.
    public var description: String { "\(record) with this key is already stored; nothing was written" }
}
