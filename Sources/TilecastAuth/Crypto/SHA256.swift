// SPDX-License-Identifier: Apache-2.0

internal import CTilecastSHA256

/// SHA-256 as specified by FIPS 180-4 §6.2.
///
/// TilecastAuth needs SHA-256 for two things: PKCE S256 (RFC 7636 §4.2) and the digests under which
/// stores keep secrets (RFC 6819 §5.1.4.1.3, "no cleartext storage of credentials"). Linux has no
/// CryptoKit and the package takes no dependencies, so the function is written here and tested against
/// the FIPS 180-4 / NIST known answers and the RFC 7636 Appendix B vector.
///
/// The implementation is a one-shot function over a contiguous buffer: every input this library hashes
/// is small and already in memory. On an x86-64 processor with the SHA extensions (Intel since Goldmont
/// and Ice Lake, AMD since Zen) it runs on those instructions, through the package's own C target
/// `CTilecastSHA256`; everywhere else it runs the portable Swift implementation below. Both are tested
/// against the known answers and against each other, on every length up to four blocks.
package enum SHA256 {
    /// Which implementation ``hash(_:)-(UnsafeRawBufferPointer)`` runs on this machine.
    package enum Implementation: Sendable {
        /// The processor's SHA instructions.
        case hardware
        /// The portable Swift implementation.
        case portable
    }

    /// The implementation this process uses, decided once from what the processor reports (CPUID).
    package static let implementation: Implementation =
        tilecast_sha256_hardware_available() == 1 ? .hardware : .portable

    /// Hashes `bytes` and returns the 32-byte digest as eight big-endian words.
    @inline(__always)
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> SHA256Words {
        switch implementation {
        case .hardware: hardwareHash(bytes)
        case .portable: portableHash(bytes)
        }
    }

    /// SHA-256 on the processor's SHA instructions; only where ``implementation`` is `.hardware`.
    package static func hardwareHash(_ bytes: UnsafeRawBufferPointer) -> SHA256Words {
        precondition(implementation == .hardware, "this processor has no SHA instructions")
        // A homogeneous tuple is laid out as a C array.
        var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { digest in
            tilecast_sha256_hardware_hash(
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                bytes.count,
                digest.baseAddress!.assumingMemoryBound(to: UInt32.self)
            )
        }
        return SHA256Words(
            w0: words.0,
            w1: words.1,
            w2: words.2,
            w3: words.3,
            w4: words.4,
            w5: words.5,
            w6: words.6,
            w7: words.7
        )
    }

    /// The longest message that is one block once padded (FIPS 180-4 §5.1.1: the message, a `1` bit and
    /// a 64-bit length fill at most 64 bytes) — the most each message of ``hashTogether(_:_:on:)`` may be.
    package static let singleBlockMessageLimit = 55

    /// The digests of two messages of at most ``singleBlockMessageLimit`` bytes each: on the SHA
    /// instructions both are hashed in one pass, about the time of one, since a lone hash waits on the
    /// latency of each pair of rounds. `chosen` is this machine's ``implementation`` but in the tests,
    /// which run the portable path on a machine with the instructions too.
    package static func hashTogether(
        _ first: UnsafeRawBufferPointer,
        _ second: UnsafeRawBufferPointer,
        on chosen: Implementation = implementation
    ) -> (SHA256Words, SHA256Words) {
        precondition(
            first.count <= singleBlockMessageLimit && second.count <= singleBlockMessageLimit,
            "hashed together, each message fits one block"
        )
        precondition(chosen == .portable || implementation == .hardware, "this processor has no SHA instructions")
        guard chosen == .hardware else { return (portableHash(first), portableHash(second)) }
        var digests = DigestLanes()
        withUnsafeMutableBytes(of: &digests.words) { words in
            let out = words.baseAddress!.assumingMemoryBound(to: UInt32.self)
            tilecast_sha256_hardware_hash_short2(
                first.baseAddress?.assumingMemoryBound(to: UInt8.self),
                first.count,
                out,
                second.baseAddress?.assumingMemoryBound(to: UInt8.self),
                second.count,
                out + 8
            )
        }
        return (digests[0], digests[1])
    }

    /// The digests of three messages of at most ``singleBlockMessageLimit`` bytes each, in one pass on
    /// the SHA instructions (see ``hashTogether(_:_:on:)``).
    package static func hashTogether(
        _ first: UnsafeRawBufferPointer,
        _ second: UnsafeRawBufferPointer,
        _ third: UnsafeRawBufferPointer,
        on chosen: Implementation = implementation
    ) -> (SHA256Words, SHA256Words, SHA256Words) {
        precondition(
            first.count <= singleBlockMessageLimit && second.count <= singleBlockMessageLimit
                && third.count <= singleBlockMessageLimit,
            "hashed together, each message fits one block"
        )
        precondition(chosen == .portable || implementation == .hardware, "this processor has no SHA instructions")
        guard chosen == .hardware else {
            return (portableHash(first), portableHash(second), portableHash(third))
        }
        var digests = DigestLanes()
        withUnsafeMutableBytes(of: &digests.words) { words in
            let out = words.baseAddress!.assumingMemoryBound(to: UInt32.self)
            tilecast_sha256_hardware_hash_short3(
                first.baseAddress?.assumingMemoryBound(to: UInt8.self),
                first.count,
                out,
                second.baseAddress?.assumingMemoryBound(to: UInt8.self),
                second.count,
                out + 8,
                third.baseAddress?.assumingMemoryBound(to: UInt8.self),
                third.count,
                out + 16
            )
        }
        return (digests[0], digests[1], digests[2])
    }

    /// Room for three digests as the C functions write them: eight words each, one after another (a
    /// homogeneous tuple is laid out as a C array).
    private struct DigestLanes {
        var words:
            (
                UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

        subscript(digest: Int) -> SHA256Words {
            withUnsafeBytes(of: words) { words in
                let word = words.bindMemory(to: UInt32.self)
                let first = digest * 8
                return SHA256Words(
                    w0: word[first],
                    w1: word[first + 1],
                    w2: word[first + 2],
                    w3: word[first + 3],
                    w4: word[first + 4],
                    w5: word[first + 5],
                    w6: word[first + 6],
                    w7: word[first + 7]
                )
            }
        }
    }

    /// SHA-256 in portable Swift.
    package static func portableHash(_ bytes: UnsafeRawBufferPointer) -> SHA256Words {
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
        string.withLentUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The SHA-256 compression function (FIPS 180-4 §6.2.2) applied to one 64-byte block.
    ///
    /// Fully unrolled: the 64 rounds name the working variables in rotation instead of moving eight
    /// values per round, and the message schedule lives in a 16-word window updated in place
    /// (`W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]`, §6.2.2 step 1). The round constants are
    /// those of §4.2.2.
    @inline(__always)
    private static func compress(_ state: inout SHA256Words, _ block: UnsafeRawBufferPointer) {
        @inline(__always)
        func word(_ index: Int) -> UInt32 {
            UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self))
        }
        var w0 = word(0)
        var w1 = word(1)
        var w2 = word(2)
        var w3 = word(3)
        var w4 = word(4)
        var w5 = word(5)
        var w6 = word(6)
        var w7 = word(7)
        var w8 = word(8)
        var w9 = word(9)
        var w10 = word(10)
        var w11 = word(11)
        var w12 = word(12)
        var w13 = word(13)
        var w14 = word(14)
        var w15 = word(15)
        var a = state.w0
        var b = state.w1
        var c = state.w2
        var d = state.w3
        var e = state.w4
        var f = state.w5
        var g = state.w6
        var h = state.w7
        round(a, b, c, &d, e, f, g, &h, 0x428a_2f98, w0)
        round(h, a, b, &c, d, e, f, &g, 0x7137_4491, w1)
        round(g, h, a, &b, c, d, e, &f, 0xb5c0_fbcf, w2)
        round(f, g, h, &a, b, c, d, &e, 0xe9b5_dba5, w3)
        round(e, f, g, &h, a, b, c, &d, 0x3956_c25b, w4)
        round(d, e, f, &g, h, a, b, &c, 0x59f1_11f1, w5)
        round(c, d, e, &f, g, h, a, &b, 0x923f_82a4, w6)
        round(b, c, d, &e, f, g, h, &a, 0xab1c_5ed5, w7)
        round(a, b, c, &d, e, f, g, &h, 0xd807_aa98, w8)
        round(h, a, b, &c, d, e, f, &g, 0x1283_5b01, w9)
        round(g, h, a, &b, c, d, e, &f, 0x2431_85be, w10)
        round(f, g, h, &a, b, c, d, &e, 0x550c_7dc3, w11)
        round(e, f, g, &h, a, b, c, &d, 0x72be_5d74, w12)
        round(d, e, f, &g, h, a, b, &c, 0x80de_b1fe, w13)
        round(c, d, e, &f, g, h, a, &b, 0x9bdc_06a7, w14)
        round(b, c, d, &e, f, g, h, &a, 0xc19b_f174, w15)
        w0 = w0 &+ smallSigma0(w1) &+ w9 &+ smallSigma1(w14)
        round(a, b, c, &d, e, f, g, &h, 0xe49b_69c1, w0)
        w1 = w1 &+ smallSigma0(w2) &+ w10 &+ smallSigma1(w15)
        round(h, a, b, &c, d, e, f, &g, 0xefbe_4786, w1)
        w2 = w2 &+ smallSigma0(w3) &+ w11 &+ smallSigma1(w0)
        round(g, h, a, &b, c, d, e, &f, 0x0fc1_9dc6, w2)
        w3 = w3 &+ smallSigma0(w4) &+ w12 &+ smallSigma1(w1)
        round(f, g, h, &a, b, c, d, &e, 0x240c_a1cc, w3)
        w4 = w4 &+ smallSigma0(w5) &+ w13 &+ smallSigma1(w2)
        round(e, f, g, &h, a, b, c, &d, 0x2de9_2c6f, w4)
        w5 = w5 &+ smallSigma0(w6) &+ w14 &+ smallSigma1(w3)
        round(d, e, f, &g, h, a, b, &c, 0x4a74_84aa, w5)
        w6 = w6 &+ smallSigma0(w7) &+ w15 &+ smallSigma1(w4)
        round(c, d, e, &f, g, h, a, &b, 0x5cb0_a9dc, w6)
        w7 = w7 &+ smallSigma0(w8) &+ w0 &+ smallSigma1(w5)
        round(b, c, d, &e, f, g, h, &a, 0x76f9_88da, w7)
        w8 = w8 &+ smallSigma0(w9) &+ w1 &+ smallSigma1(w6)
        round(a, b, c, &d, e, f, g, &h, 0x983e_5152, w8)
        w9 = w9 &+ smallSigma0(w10) &+ w2 &+ smallSigma1(w7)
        round(h, a, b, &c, d, e, f, &g, 0xa831_c66d, w9)
        w10 = w10 &+ smallSigma0(w11) &+ w3 &+ smallSigma1(w8)
        round(g, h, a, &b, c, d, e, &f, 0xb003_27c8, w10)
        w11 = w11 &+ smallSigma0(w12) &+ w4 &+ smallSigma1(w9)
        round(f, g, h, &a, b, c, d, &e, 0xbf59_7fc7, w11)
        w12 = w12 &+ smallSigma0(w13) &+ w5 &+ smallSigma1(w10)
        round(e, f, g, &h, a, b, c, &d, 0xc6e0_0bf3, w12)
        w13 = w13 &+ smallSigma0(w14) &+ w6 &+ smallSigma1(w11)
        round(d, e, f, &g, h, a, b, &c, 0xd5a7_9147, w13)
        w14 = w14 &+ smallSigma0(w15) &+ w7 &+ smallSigma1(w12)
        round(c, d, e, &f, g, h, a, &b, 0x06ca_6351, w14)
        w15 = w15 &+ smallSigma0(w0) &+ w8 &+ smallSigma1(w13)
        round(b, c, d, &e, f, g, h, &a, 0x1429_2967, w15)
        w0 = w0 &+ smallSigma0(w1) &+ w9 &+ smallSigma1(w14)
        round(a, b, c, &d, e, f, g, &h, 0x27b7_0a85, w0)
        w1 = w1 &+ smallSigma0(w2) &+ w10 &+ smallSigma1(w15)
        round(h, a, b, &c, d, e, f, &g, 0x2e1b_2138, w1)
        w2 = w2 &+ smallSigma0(w3) &+ w11 &+ smallSigma1(w0)
        round(g, h, a, &b, c, d, e, &f, 0x4d2c_6dfc, w2)
        w3 = w3 &+ smallSigma0(w4) &+ w12 &+ smallSigma1(w1)
        round(f, g, h, &a, b, c, d, &e, 0x5338_0d13, w3)
        w4 = w4 &+ smallSigma0(w5) &+ w13 &+ smallSigma1(w2)
        round(e, f, g, &h, a, b, c, &d, 0x650a_7354, w4)
        w5 = w5 &+ smallSigma0(w6) &+ w14 &+ smallSigma1(w3)
        round(d, e, f, &g, h, a, b, &c, 0x766a_0abb, w5)
        w6 = w6 &+ smallSigma0(w7) &+ w15 &+ smallSigma1(w4)
        round(c, d, e, &f, g, h, a, &b, 0x81c2_c92e, w6)
        w7 = w7 &+ smallSigma0(w8) &+ w0 &+ smallSigma1(w5)
        round(b, c, d, &e, f, g, h, &a, 0x9272_2c85, w7)
        w8 = w8 &+ smallSigma0(w9) &+ w1 &+ smallSigma1(w6)
        round(a, b, c, &d, e, f, g, &h, 0xa2bf_e8a1, w8)
        w9 = w9 &+ smallSigma0(w10) &+ w2 &+ smallSigma1(w7)
        round(h, a, b, &c, d, e, f, &g, 0xa81a_664b, w9)
        w10 = w10 &+ smallSigma0(w11) &+ w3 &+ smallSigma1(w8)
        round(g, h, a, &b, c, d, e, &f, 0xc24b_8b70, w10)
        w11 = w11 &+ smallSigma0(w12) &+ w4 &+ smallSigma1(w9)
        round(f, g, h, &a, b, c, d, &e, 0xc76c_51a3, w11)
        w12 = w12 &+ smallSigma0(w13) &+ w5 &+ smallSigma1(w10)
        round(e, f, g, &h, a, b, c, &d, 0xd192_e819, w12)
        w13 = w13 &+ smallSigma0(w14) &+ w6 &+ smallSigma1(w11)
        round(d, e, f, &g, h, a, b, &c, 0xd699_0624, w13)
        w14 = w14 &+ smallSigma0(w15) &+ w7 &+ smallSigma1(w12)
        round(c, d, e, &f, g, h, a, &b, 0xf40e_3585, w14)
        w15 = w15 &+ smallSigma0(w0) &+ w8 &+ smallSigma1(w13)
        round(b, c, d, &e, f, g, h, &a, 0x106a_a070, w15)
        w0 = w0 &+ smallSigma0(w1) &+ w9 &+ smallSigma1(w14)
        round(a, b, c, &d, e, f, g, &h, 0x19a4_c116, w0)
        w1 = w1 &+ smallSigma0(w2) &+ w10 &+ smallSigma1(w15)
        round(h, a, b, &c, d, e, f, &g, 0x1e37_6c08, w1)
        w2 = w2 &+ smallSigma0(w3) &+ w11 &+ smallSigma1(w0)
        round(g, h, a, &b, c, d, e, &f, 0x2748_774c, w2)
        w3 = w3 &+ smallSigma0(w4) &+ w12 &+ smallSigma1(w1)
        round(f, g, h, &a, b, c, d, &e, 0x34b0_bcb5, w3)
        w4 = w4 &+ smallSigma0(w5) &+ w13 &+ smallSigma1(w2)
        round(e, f, g, &h, a, b, c, &d, 0x391c_0cb3, w4)
        w5 = w5 &+ smallSigma0(w6) &+ w14 &+ smallSigma1(w3)
        round(d, e, f, &g, h, a, b, &c, 0x4ed8_aa4a, w5)
        w6 = w6 &+ smallSigma0(w7) &+ w15 &+ smallSigma1(w4)
        round(c, d, e, &f, g, h, a, &b, 0x5b9c_ca4f, w6)
        w7 = w7 &+ smallSigma0(w8) &+ w0 &+ smallSigma1(w5)
        round(b, c, d, &e, f, g, h, &a, 0x682e_6ff3, w7)
        w8 = w8 &+ smallSigma0(w9) &+ w1 &+ smallSigma1(w6)
        round(a, b, c, &d, e, f, g, &h, 0x748f_82ee, w8)
        w9 = w9 &+ smallSigma0(w10) &+ w2 &+ smallSigma1(w7)
        round(h, a, b, &c, d, e, f, &g, 0x78a5_636f, w9)
        w10 = w10 &+ smallSigma0(w11) &+ w3 &+ smallSigma1(w8)
        round(g, h, a, &b, c, d, e, &f, 0x84c8_7814, w10)
        w11 = w11 &+ smallSigma0(w12) &+ w4 &+ smallSigma1(w9)
        round(f, g, h, &a, b, c, d, &e, 0x8cc7_0208, w11)
        w12 = w12 &+ smallSigma0(w13) &+ w5 &+ smallSigma1(w10)
        round(e, f, g, &h, a, b, c, &d, 0x90be_fffa, w12)
        w13 = w13 &+ smallSigma0(w14) &+ w6 &+ smallSigma1(w11)
        round(d, e, f, &g, h, a, b, &c, 0xa450_6ceb, w13)
        w14 = w14 &+ smallSigma0(w15) &+ w7 &+ smallSigma1(w12)
        round(c, d, e, &f, g, h, a, &b, 0xbef9_a3f7, w14)
        w15 = w15 &+ smallSigma0(w0) &+ w8 &+ smallSigma1(w13)
        round(b, c, d, &e, f, g, h, &a, 0xc671_78f2, w15)
        state.w0 &+= a
        state.w1 &+= b
        state.w2 &+= c
        state.w3 &+= d
        state.w4 &+= e
        state.w5 &+= f
        state.w6 &+= g
        state.w7 &+= h
    }

    /// One round (§6.2.2 step 3): updates `d` and `h`; the caller rotates the names.
    @inline(__always)
    private static func round(
        _ a: UInt32,
        _ b: UInt32,
        _ c: UInt32,
        _ d: inout UInt32,
        _ e: UInt32,
        _ f: UInt32,
        _ g: UInt32,
        _ h: inout UInt32,
        _ constant: UInt32,
        _ word: UInt32
    ) {
        // Σ1 and Σ0 nested as ((x ⋙ 14 ^ x) ⋙ 5 ^ x) ⋙ 6, which equals x ⋙ 6 ^ x ⋙ 11 ^ x ⋙ 25 and
        // needs one copy of x instead of three.
        let sum1 = ((e.rotatedRight(14) ^ e).rotatedRight(5) ^ e).rotatedRight(6)
        let choose = g ^ (e & (f ^ g))
        let temp1 = h &+ sum1 &+ choose &+ constant &+ word
        let sum0 = ((a.rotatedRight(9) ^ a).rotatedRight(11) ^ a).rotatedRight(2)
        let majority = (a & b) | (c & (a | b))
        d &+= temp1
        h = temp1 &+ sum0 &+ majority
    }

    /// σ0 of §4.1.2 (4.6).
    @inline(__always)
    private static func smallSigma0(_ x: UInt32) -> UInt32 {
        x.rotatedRight(7) ^ x.rotatedRight(18) ^ (x >> 3)
    }

    /// σ1 of §4.1.2 (4.7).
    @inline(__always)
    private static func smallSigma1(_ x: UInt32) -> UInt32 {
        x.rotatedRight(17) ^ x.rotatedRight(19) ^ (x >> 10)
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
