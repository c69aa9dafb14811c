// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct ConstantTimeTests {
    @Test("Digests compare equal only when every word matches")
    func digests() {
        let digest = SHA256.hash(utf8: "a")
        #expect(ConstantTime.equals(digest, digest))
        var other = digest
        other.w7 ^= 1
        #expect(!ConstantTime.equals(digest, other))
        other = digest
        other.w0 ^= 0x8000_0000
        #expect(!ConstantTime.equals(digest, other))
    }

}
