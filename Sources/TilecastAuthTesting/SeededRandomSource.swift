// SPDX-License-Identifier: Apache-2.0

public import TilecastAuth

/// A deterministic random source, so every secret a test mints is the same on every run.
///
/// - Warning: Its output is predictable by design: an engine minting secrets with it hands out codes,
///   tokens and session ids anyone can compute. So that it cannot reach production by a copied line, it
///   can only be created behind `@_spi(Testing) import TilecastAuthTesting` — an import no server has.
public final class SeededRandomSource: RandomSource, Sendable {
    private let state: LockedValue<(seed: UInt64, fills: Int, bytes: Int)>

    /// Creates a source whose output is fixed by `seed`. Tests only: see the type's warning.
    @_spi(Testing)
    public init(seed: UInt64 = 0x5EED) {
        self.state = LockedValue((seed, 0, 0))
    }

    /// How many times ``fill(_:)`` has been called: once per operation that mints.
    public var fillCount: Int { state.withLock { $0.fills } }

    /// How many bytes ``fill(_:)`` has handed out in all: 32 per secret, 16 per grant id.
    public var bytesRead: Int { state.withLock { $0.bytes } }

    /// Fills the buffer from a SplitMix64 sequence.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        state.withLock { state in
            state.fills += 1
            state.bytes += buffer.count
            var word: UInt64 = 0
            for index in 0..<buffer.count {
                if index % 8 == 0 {
                    state.seed &+= 0x9E37_79B9_7F4A_7C15
                    word = state.seed
                    word = (word ^ (word >> 30)) &* 0xBF58_476D_1CE4_E5B9
                    word = (word ^ (word >> 27)) &* 0x94D0_49BB_1331_11EB
                    word ^= word >> 31
                }
                buffer[index] = UInt8(truncatingIfNeeded: word >> (UInt64(index % 8) * 8))
            }
        }
    }
}
