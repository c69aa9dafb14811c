// SPDX-License-Identifier: Apache-2.0

internal import CTilecastRandom

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating system's CSPRNG, read once per request — the engine makes one request per operation,
/// for all the secrets it mints.
///
/// On Linux 6.11 and later on x86-64 (6.14 on AArch64) the read goes through the kernel's vDSO
/// `getrandom`: a ChaCha20 generator of the kernel's, keyed from `getrandom(2)` and rekeyed whenever the
/// kernel reseeds, run in the calling thread on a per-thread state in memory the kernel specifies
/// (wiped in a forked child, never swapped or dumped), with no system call: about a third of the time
/// for an exchange's 112 bytes.
/// Elsewhere, and whenever the vDSO call cannot be made, it is one `getentropy(3)` call, which on Linux is
/// a single `getrandom(2)` system call for up to 256 bytes and on Darwin reads the kernel's generator the
/// same way. Swift's `SystemRandomNumberGenerator` would instead make one call per 8 bytes — four system
/// calls for every secret.
public struct SystemRandomSource: RandomSource {
    /// The largest request `getentropy` serves in one call.
    private static let maximumRequest = 256

    public init() {}

    /// Whether this process found the kernel's vDSO `getrandom`.
    static var usesVDSO: Bool { tilecast_random_vdso_available() != 0 }

    /// Fills `buffer` through the vDSO `getrandom` only; `false` when that cannot be done on this thread
    /// (for tests: on a kernel that has it, every fill must take this path).
    static func fillThroughVDSO(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        return tilecast_random_fill(base, buffer.count) == 0
    }

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        if tilecast_random_fill(base, buffer.count) == 0 {
            return
        }
        Self.fillWithSystemCall(buffer)
    }

    /// Fills `buffer` with `getentropy` calls of at most 256 bytes; the path where the vDSO has no
    /// `getrandom`.
    static func fillWithSystemCall(_ buffer: UnsafeMutableRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let count = min(Self.maximumRequest, buffer.count - offset)
            guard let base = buffer.baseAddress else { return }
            if getentropy(base + offset, count) == 0 {
                offset += count
            } else if errno != EINTR {
                // Without the kernel's generator no secret can be minted safely; continuing would be worse
                // than stopping. This is not reachable from any request input.
                fatalError("getentropy failed with errno \(errno); the system CSPRNG is unavailable")
            }
        }
    }
}
