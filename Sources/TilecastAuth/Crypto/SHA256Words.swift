// SPDX-License-Identifier: Apache-2.0

/// A SHA-256 state or digest: eight 32-bit words, most significant first (FIPS 180-4 §6.2).
package struct SHA256Words: Hashable, Sendable {
    package var w0: UInt32
    package var w1: UInt32
    var w2: UInt32
    var w3: UInt32
    var w4: UInt32
    var w5: UInt32
    var w6: UInt32
    var w7: UInt32

    /// The initial hash value H(0) of FIPS 180-4 §5.3.3.
    static let initial = SHA256Words(
        w0: 0x6a09_e667,
        w1: 0xbb67_ae85,
        w2: 0x3c6e_f372,
        w3: 0xa54f_f53a,
        w4: 0x510e_527f,
        w5: 0x9b05_688c,
        w6: 0x1f83_d9ab,
        w7: 0x5be0_cd19
    )

    /// The digest's 32 bytes in big-endian order, as FIPS 180-4 prints them.
    var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(32)
        for word in [w0, w1, w2, w3, w4, w5, w6, w7] {
            result.append(UInt8(truncatingIfNeeded: word >> 24))
            result.append(UInt8(truncatingIfNeeded: word >> 16))
            result.append(UInt8(truncatingIfNeeded: word >> 8))
            result.append(UInt8(truncatingIfNeeded: word))
        }
        return result
    }

    /// Calls `body` with the digest's 32 big-endian bytes, without allocating.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var bigEndian = (
            w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian,
            w4.bigEndian, w5.bigEndian, w6.bigEndian, w7.bigEndian
        )
        return withUnsafeBytes(of: &bigEndian) { body($0) }
    }
}
