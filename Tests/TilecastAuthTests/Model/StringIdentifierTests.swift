// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct StringIdentifierTests {
    /// Texts of every storage a native `String` has: empty, small (kept inside the value, up to 15 bytes),
    /// large (a buffer of its own), not ASCII, and made from a substring or decoded bytes.
    static let texts = [
        "", "tilecast-ios", "exactly15bytes!", "an account id long enough to live on the heap",
        "compte-é-ü-日本", String(Substring("a slice of a longer account id text").dropFirst(2)),
        String(decoding: Array("decoded from bytes, long enough for a buffer".utf8), as: UTF8.self),
    ]

    @Test("Equal identifiers hash alike, whatever storage their strings have", arguments: texts)
    func hashAgreesWithEquality(text: String) {
        // A copy made through other storage: a concatenation builds a new buffer, or a new small string.
        let rebuilt = String(text.prefix(3)) + String(text.dropFirst(3))
        #expect(AccountID(text) == AccountID(rebuilt))
        #expect(AccountID(text).hashValue == AccountID(rebuilt).hashValue)
        #expect(ClientID(text).hashValue == ClientID(rebuilt).hashValue)
        var seen: Set<AccountID> = [AccountID(text)]
        #expect(!seen.insert(AccountID(rebuilt)).inserted)
    }

    @Test("Identifiers compare bytes: a canonically equivalent spelling is another identifier")
    func bytewise() {
        let composed = AccountID("caf\u{E9}")
        let decomposed = AccountID("cafe\u{301}")
        #expect(composed.rawValue == decomposed.rawValue)  // Swift's String equality: equivalent
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
    }
}
