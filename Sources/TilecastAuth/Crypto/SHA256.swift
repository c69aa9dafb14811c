// SPDX-License-Identifier: Apache-2.0

/// SHA-256 as specified by FIPS 180-4 §6.2.
///
/// TilecastAuth needs SHA-256 for two things: PKCE S256 (RFC 7636 §4.2) and the digests under which
/// stores keep secrets (RFC 6819 §5.1.4.1.3, "no cleartext storage of credentials"). Linux has no
/// CryptoKit and the package takes no dependencies, so the function is written here and tested against
/// the FIPS 180-4 / NIST known answers and the RFC 7636 Appendix B vector.
///
/// The implementation is a one-shot function over a contiguous buffer: every input this library hashes
/// is small and already in memory.
package enum SHA256 {
    /// Hashes `bytes` and returns the 32-byte digest as eight big-endian words.
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> SHA256Words {
        var state = SHA256Words.initial
        let count = bytes.count
        let fullBlocks = count / 64
        for block in 0..<fullBlocks {
            compress(&state, UnsafeRawBufferPointer(rebasing: bytes[(block * 64)..<(block * 64 + 64)]))
        }

        // Padding (FIPS 180-4 §5.1.1): 0x80, zeros, then the bit length as a 64-bit big-endian integer.
        let tailCount = count - fullBlocks * 64
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if tailCount > 0 {
                tail.baseAddress!.copyMemory(
                    from: bytes.baseAddress! + fullBlocks * 64,
                    byteCount: tailCount
                )
            }
            tail[tailCount] = 0x80
            let tailBlocks = tailCount < 56 ? 1 : 2
            let bitLength = UInt64(count) &* 8
            for index in 0..<8 {
                tail[tailBlocks * 64 - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (UInt64(index) * 8))
            }
            let padded = UnsafeRawBufferPointer(tail)
            compress(&state, UnsafeRawBufferPointer(rebasing: padded[0..<64]))
            if tailBlocks == 2 {
                compress(&state, UnsafeRawBufferPointer(rebasing: padded[64..<128]))
            }
        }
        return state
    }

    /// Hashes the bytes of a collection that stores them contiguously.
    static func hash(_ bytes: some Sequence<UInt8>) -> SHA256Words {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// Hashes the UTF-8 bytes of `string`.
    static func hash(utf8 string: String) -> SHA256Words {
        var string = string
        return string.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The SHA-256 compression function (FIPS 180-4 §6.2.2) applied to one 64-byte block.
    @inline(__always)
    private static func compress(_ state: inout SHA256Words, _ block: UnsafeRawBufferPointer) {
        var schedule = InlineArray<64, UInt32>(repeating: 0)
        for index in 0..<16 {
            schedule[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
        }
        for index in 16..<64 {
            let w15 = schedule[index - 15]
            let w2 = schedule[index - 2]
            let sigma0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 >> 3)
            let sigma1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 >> 10)
            schedule[index] = schedule[index - 16] &+ sigma0 &+ schedule[index - 7] &+ sigma1
        }

        var a = state.w0
        var b = state.w1
        var c = state.w2
        var d = state.w3
        var e = state.w4
        var f = state.w5
        var g = state.w6
        var h = state.w7
        for index in 0..<64 {
            let sum1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
            let choose = (e & f) ^ (~e & g)
            let temp1 = h &+ sum1 &+ choose &+ roundConstants[index] &+ schedule[index]
            let sum0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temp2 = sum0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ temp1
            d = c
            c = b
            b = a
            a = temp1 &+ temp2
        }
        state.w0 &+= a
        state.w1 &+= b
        state.w2 &+= c
        state.w3 &+= d
        state.w4 &+= e
        state.w5 &+= f
        state.w6 &+= g
        state.w7 &+= h
    }

    /// The 64 round constants of FIPS 180-4 §4.2.2.
    private static let roundConstants: InlineArray<64, UInt32> = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
