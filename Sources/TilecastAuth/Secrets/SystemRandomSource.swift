// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating system's CSPRNG, read with one `getentropy(3)` call per request — the engine makes one
/// per operation, for all the secrets it mints.
///
/// On Linux `getentropy` is a single `getrandom(2)` system call for up to 256 bytes; on Darwin it reads
/// the kernel's generator the same way. Swift's `SystemRandomNumberGenerator` would instead make one
/// call per 8 bytes — four system calls for every secret.
public struct SystemRandomSource: RandomSource {
    /// The largest request `getentropy` serves in one call.
    private static let maximumRequest = 256

    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
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
