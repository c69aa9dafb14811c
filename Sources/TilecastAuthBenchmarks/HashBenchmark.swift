// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// SHA-256 of 64 bytes: ours, and OpenSSL's on the same machine for comparison.
public enum HashBenchmark: Sendable {
    /// What `SHA256.hash` runs on this machine: "the processor's SHA instructions" or "portable Swift".
    public static var implementationName: String {
        SHA256.implementation == .hardware ? "the processor's SHA instructions" : "portable Swift"
    }

    /// Microseconds per SHA-256 of a 64-byte input with TilecastAuth's implementation (median of `runs`):
    /// the one the engine uses on this machine, or with `portable` the portable Swift one.
    public static func ours(runs: Int = 5, iterations: Int = 1_000_000, portable: Bool = false) -> Double {
        var input = [UInt8](repeating: 0x5A, count: 64)
        var results: [Double] = []
        var sink: UInt32 = 0
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<iterations {
                input[0] = UInt8(truncatingIfNeeded: index)
                sink ^= input.withUnsafeBytes { portable ? SHA256.portableHash($0).w0 : SHA256.hash($0).w0 }
            }
            results.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(iterations))
        }
        if sink == 0x1234_5678 { print("") }  // keeps the loop from being optimised away
        return results.sorted()[results.count / 2]
    }

    /// The floor the rules set under a code exchange, in microseconds (median of `runs`): one read of the
    /// operating system's random source for the grant id and the three secrets (112 bytes), and the five
    /// SHA-256 digests — the presented code, the verifier, the three new secrets (47, 43 and 3 × 47
    /// bytes) — on the implementation the engine uses, hashed as the engine hashes them: the code with
    /// the verifier, the three secrets together (``SHA256/hashTogether(_:_:_:)``). Everything else an
    /// exchange does is above it.
    public static func exchangeFloor(runs: Int = 5, iterations: Int = 100_000) -> Double {
        let random = SystemRandomSource()
        var bytes = [UInt8](repeating: 0x41, count: 112)
        var results: [Double] = []
        var sink: UInt32 = 0
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<iterations {
                bytes.withUnsafeMutableBytes { random.fill($0) }
                bytes.withUnsafeBytes { all in
                    func part(_ offset: Int, _ count: Int) -> UnsafeRawBufferPointer {
                        UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)])
                    }
                    let presented = SHA256.hashTogether(part(0, 47), part(47, 43))
                    let minted = SHA256.hashTogether(part(16, 47), part(32, 47), part(48, 47))
                    sink ^= presented.0.w0 ^ presented.1.w0 ^ minted.0.w0 ^ minted.1.w0 ^ minted.2.w0
                }
            }
            results.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(iterations))
        }
        if sink == 0x1234_5678 { print("") }  // keeps the loop from being optimised away
        return results.sorted()[results.count / 2]
    }

    /// Microseconds per SHA-256 of 64 bytes by `openssl speed -evp sha256 -bytes 64`, or `nil` when
    /// `openssl` is not installed.
    public static func openssl(seconds: Int = 3) -> Double? {
        let output = Shell.run(
            "/usr/bin/env",
            ["openssl", "speed", "-evp", "sha256", "-bytes", "64", "-seconds", String(seconds)]
        )
        // "Doing sha256 for 3s on 64 size blocks: 12345678 sha256's in 2.99s"
        guard let output,
            let match = output.firstMatch(of: /on 64 size blocks: ([0-9]+) [A-Za-z0-9-]+'s in ([0-9.]+)s/),
            let count = Double(match.1), let elapsed = Double(match.2), count > 0
        else { return nil }
        return elapsed / count * 1_000_000
    }
}
