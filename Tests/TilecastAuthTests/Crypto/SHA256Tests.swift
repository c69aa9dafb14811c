// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import TilecastAuth

struct SHA256Tests {
    private func hex(_ words: SHA256Words) -> String {
        words.bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// FIPS 180-4 / NIST CAVP known answers, including the empty message and the two-block messages.
    @Test(
        "NIST known answers",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ]
    )
    func knownAnswers(message: String, digest: String) {
        #expect(hex(SHA256.hash(utf8: message)) == digest)
    }

    @Test("NIST known answer: one million a")
    func millionA() {
        #expect(
            hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    /// Lengths around the padding boundaries (55/56 bytes decide whether padding needs a second block),
    /// with digests from an independent implementation (Python's hashlib).
    @Test(
        "Padding boundaries",
        arguments: [
            (55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
            (56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
            (63, "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
            (64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
            (65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
            (119, "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6"),
            (120, "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c"),
            (127, "92ca0fa6651ee2f97b884b7246a562fa71250fedefe5ebf270d31c546bfea976"),
            (128, "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5"),
        ]
    )
    func paddingBoundaries(length: Int, digest: String) {
        let message = (0..<length).map { UInt8($0) }
        #expect(hex(SHA256.hash(message)) == digest)
    }

    /// Every implementation this machine can run: the portable one always, the processor's where it has
    /// the SHA instructions.
    private static var implementations: [(String, @Sendable (UnsafeRawBufferPointer) -> SHA256Words)] {
        var result: [(String, @Sendable (UnsafeRawBufferPointer) -> SHA256Words)] = [
            ("portable", SHA256.portableHash)
        ]
        if SHA256.implementation == .hardware {
            result.append(("hardware", SHA256.hardwareHash))
        }
        return result
    }

    @Test("Each implementation gives the known answers, at the padding boundaries too")
    func eachImplementationKnownAnswers() {
        let answers: [([UInt8], String)] = [
            ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            ((0..<55).map { UInt8($0) }, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
            ((0..<56).map { UInt8($0) }, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
            ((0..<64).map { UInt8($0) }, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
            ((0..<128).map { UInt8($0) }, "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5"),
            (
                [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000),
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
            ),
        ]
        for (name, hash) in Self.implementations {
            for (message, digest) in answers {
                let actual = message.withUnsafeBytes { hex(hash($0)) }
                #expect(actual == digest, "\(name), \(message.count) bytes")
            }
        }
    }

    /// The processor's implementation against the portable one on every length from 0 to 256 bytes, four
    /// blocks, each with bytes of its own — and with the input at every alignment within 16 bytes, since
    /// the hardware path loads unaligned words.
    @Test(
        "The processor's SHA-256 agrees with the portable one on every length and alignment",
        .enabled(if: SHA256.implementation == .hardware, "this processor has no SHA instructions")
    )
    func hardwareAgreesWithPortable() {
        var generator = SystemRandomNumberGenerator()
        var buffer = [UInt8](repeating: 0, count: 256 + 16)
        for length in 0...256 {
            for offset in 0..<16 {
                for index in buffer.indices { buffer[index] = generator.next() }
                buffer.withUnsafeBytes { all in
                    let input = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    #expect(
                        SHA256.hardwareHash(input) == SHA256.portableHash(input),
                        "length \(length), offset \(offset)"
                    )
                }
            }
        }
    }

    /// Messages hashed together get each its own digest: every length from 0 to 55 bytes in each place,
    /// beside messages of other lengths and bytes, at every alignment within 16 bytes — against the
    /// portable implementation, one message at a time. On each implementation this machine has: the
    /// portable one is what a processor without the SHA instructions hashes together with.
    @Test(
        "Two or three messages hashed together get the digests each gets alone",
        arguments: SHA256.implementation == .hardware ? [SHA256.Implementation.portable, .hardware] : [.portable]
    )
    func hashedTogetherAgreesWithAlone(on implementation: SHA256.Implementation) {
        var generator = SystemRandomNumberGenerator()
        let limit = SHA256.singleBlockMessageLimit
        var buffers = (0..<3).map { _ in [UInt8](repeating: 0, count: limit + 16) }
        for length in 0...limit {
            for offset in 0..<16 {
                for buffer in buffers.indices {
                    for index in buffers[buffer].indices { buffers[buffer][index] = generator.next() }
                }
                // `length` in the first, second and third place in turn; the others of random lengths.
                for place in 0..<3 {
                    let lengths = (0..<3).map { $0 == place ? length : Int.random(in: 0...limit, using: &generator) }
                    buffers[0].withUnsafeBytes { first in
                        buffers[1].withUnsafeBytes { second in
                            buffers[2].withUnsafeBytes { third in
                                let inputs = [first, second, third].enumerated().map { index, all in
                                    UnsafeRawBufferPointer(rebasing: all[offset..<(offset + lengths[index])])
                                }
                                let alone = inputs.map(SHA256.portableHash)
                                let two = SHA256.hashTogether(inputs[0], inputs[1], on: implementation)
                                let three = SHA256.hashTogether(inputs[0], inputs[1], inputs[2], on: implementation)
                                #expect([two.0, two.1] == Array(alone[0..<2]), "lengths \(lengths), offset \(offset)")
                                #expect([three.0, three.1, three.2] == alone, "lengths \(lengths), offset \(offset)")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test("Messages hashed together give the known answers")
    func hashedTogetherKnownAnswers() {
        let abc = Array("abc".utf8)
        let empty: [UInt8] = []
        let longest = (0..<55).map { UInt8($0) }
        abc.withUnsafeBytes { abc in
            empty.withUnsafeBytes { empty in
                longest.withUnsafeBytes { longest in
                    let three = SHA256.hashTogether(abc, empty, longest)
                    #expect(hex(three.0) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
                    #expect(hex(three.1) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
                    #expect(hex(three.2) == "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59")
                    let two = SHA256.hashTogether(longest, abc)
                    #expect(hex(two.0) == "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59")
                    #expect(hex(two.1) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
                }
            }
        }
    }

    /// The choice follows what the processor says: a Linux machine whose `/proc/cpuinfo` lists `sha_ni`
    /// must use it, and one that does not must not.
    @Test("The processor's instructions are used exactly where it has them")
    func implementationFollowsTheProcessor() throws {
        #if os(Linux) && arch(x86_64)
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
        let words = Set(flags.split(separator: " "))
        let expected: SHA256.Implementation =
            words.contains("sha_ni") && words.contains("ssse3") && words.contains("sse4_1") ? .hardware : .portable
        #expect(SHA256.implementation == expected)
        #else
        #expect(SHA256.implementation == .portable)
        #endif
    }

    /// RFC 7636 Appendix B: the verifier's SHA-256 octets and the resulting S256 challenge.
    @Test("RFC 7636 Appendix B")
    func rfc7636AppendixB() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let octets: [UInt8] = [
            19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8,
            118, 168, 120, 173, 109, 241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195,
        ]
        #expect(SHA256.hash(utf8: verifier).bytes == octets)
        #expect(PKCE.s256Challenge(for: verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let challenge = CodeChallenge(method: .s256, value: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(PKCE.verify(JSONText(verifier), against: challenge))
        #expect(!PKCE.verify(JSONText(verifier.replacingOccurrences(of: "d", with: "e")), against: challenge))
        #expect(!PKCE.verify(JSONText(verifier), against: CodeChallenge(method: .plain, value: verifier)))
        #expect(!PKCE.verify(JSONText(verifier), against: nil))
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
