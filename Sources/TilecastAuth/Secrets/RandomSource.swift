// SPDX-License-Identifier: Apache-2.0

/// Where TilecastAuth gets the random bytes of every secret and id it mints.
///
/// Production uses ``SystemRandomSource``, the operating system's CSPRNG. Tests inject a seeded source so
/// that every minted value is reproducible.
///
/// - Important: An implementation used outside tests must be a cryptographically secure generator
///   (RFC 6819 §5.1.4.2.2, RFC 6749 §10.10). ``fill(_:)`` is called once per operation that mints, for
///   all its secrets and ids at once — 32 bytes for each secret, 16 for a grant id, each its own — and
///   must fill the whole buffer.
public protocol RandomSource: Sendable {
    /// Fills every byte of `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}
