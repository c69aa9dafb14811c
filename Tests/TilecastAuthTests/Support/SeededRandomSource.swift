// SPDX-License-Identifier: Apache-2.0

import Synchronization
import TilecastAuth

/// A deterministic random source (SplitMix64) so every minted value is the same on every run.
/// Never use anything like it outside tests.
final class SeededRandomSource: RandomSource, Sendable {
    private let state: Mutex<UInt64>
    private let calls = Mutex(0)

    init(seed: UInt64 = 0x5EED) {
        self.state = Mutex(seed)
    }

    /// How many times `fill(_:)` was called.
    var fillCount: Int { calls.withLock { $0 } }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        calls.withLock { $0 += 1 }
        state.withLock { state in
            for index in 0..<buffer.count {
                if index % 8 == 0 {
                    state &+= 0x9E37_79B9_7F4A_7C15
                }
                var mixed = state
                mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                mixed ^= mixed >> 31
                buffer[index] = UInt8(truncatingIfNeeded: mixed >> (UInt64(index % 8) * 8))
            }
        }
    }
}
