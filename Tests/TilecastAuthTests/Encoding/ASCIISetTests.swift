// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct ASCIISetTests {
    @Test("The verifier's and the token's alphabets are exactly their definitions, over all 256 bytes")
    func constantsMatchTheirDefinitions() {
        let unreserved: (UInt8) -> Bool = { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                true
            default:
                false
            }
        }
        for byte in UInt8.min...UInt8.max {
            #expect(ASCIISet.unreserved.contains(byte) == unreserved(byte), "byte \(byte)")
            #expect(ASCIISet.base64URL.contains(byte) == (Base64URL.value(of: byte) != nil), "byte \(byte)")
        }
        #expect(ASCIISet.unreserved.containsAll(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    @Test(
        "Every byte, at every position of texts of 1 to 17 bytes and of a token's and a verifier's lengths, is judged as it is alone",
        arguments: Array(1...17) + [39, 43, 128]
    )
    func containsAllAgreesWithContainsAtEveryPositionAndLength(length: Int) {
        for set in [ASCIISet.base64URL, ASCIISet.unreserved] {
            // Members all, so that only the byte put in decides: the word path for whole words, the tail's
            // padding past the end.
            let filler = Array("aZ09-_".utf8)
            let valid = (0..<length).map { filler[$0 % filler.count] }
            valid.withUnsafeBytes { #expect(set.containsAll($0)) }
            for position in valid.indices {
                for byte in UInt8.min...UInt8.max {
                    var text = valid
                    text[position] = byte
                    let judged = text.withUnsafeBytes { set.containsAll($0) }
                    if judged != set.contains(byte) {
                        Issue.record("byte \(byte) at \(position) of \(length): containsAll says \(judged)")
                    }
                }
            }
        }
    }

    @Test("One byte outside the set, anywhere — first, last, or with its high bit set — fails the whole text")
    func containsAllChecksEveryByte() {
        let valid = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)
        valid.withUnsafeBytes { #expect(ASCIISet.base64URL.containsAll($0)) }
        for position in valid.indices {
            // "." differs from "-" by one bit; 0xAD is "-" with the high bit set; "=" is padding.
            for intruder: UInt8 in [UInt8(ascii: "."), 0xAD, UInt8(ascii: "="), 0] {
                var text = valid
                text[position] = intruder
                text.withUnsafeBytes { #expect(!ASCIISet.base64URL.containsAll($0), "\(intruder) at \(position)") }
            }
        }
    }
}
