// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
@_spi(Testing) import TilecastAuthTesting

@testable import TilecastAuth

struct GrantIDTests {
    /// Ids that differ in one byte only, at each end, and across the digits' jump from `9` to `A` (a byte
    /// `0x09` against `0x0A`, and `0x9F` against `0xA0`), where a comparison of the wrong digits would show;
    /// and across `0x7F` and `0x80` at the start of either half, where a signed comparison would (a version 4
    /// id's ninth byte is always `0x80`–`0xBF`, so random ids never show it).
    static let neighbours: [(String, String)] = [
        ("7FFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF", "80000000-0000-4000-8000-000000000000"),
        ("00000000-0000-4000-7FFF-FFFFFFFFFFFF", "00000000-0000-4000-8000-000000000000"),
        ("00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001"),
        ("09000000-0000-4000-8000-000000000000", "0A000000-0000-4000-8000-000000000000"),
        ("9F000000-0000-4000-8000-000000000000", "A0000000-0000-4000-8000-000000000000"),
        ("FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFE", "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"),
        ("12345678-9ABC-4DEF-8123-456789ABCDEF", "12345679-0000-4000-8000-000000000000"),
        ("12345678-9ABC-4DEF-8123-456789ABCDEF", "12345678-9ABC-4DEF-8123-456789ABCDF0"),
    ]

    @Test("An id sorts before another exactly when its text does, and never before itself", arguments: neighbours)
    func neighboursSortAsTheirText(lower: String, higher: String) throws {
        let first = GrantID(rawValue: try #require(UUID(uuidString: lower)))
        let second = GrantID(rawValue: try #require(UUID(uuidString: higher)))
        #expect(first.sortsBefore(second))
        #expect(!second.sortsBefore(first))
        #expect(!first.sortsBefore(first))
    }

    @Test("Random ids sort as their text, upper or lower case, does")
    func randomIdsSortAsTheirText() {
        let random = SeededRandomSource(seed: 17)
        let ids = (0..<400).map { _ in GrantID(randomSource: random) }
        for (first, second) in zip(ids, ids.dropFirst()) {
            let text = (first.rawValue.uuidString, second.rawValue.uuidString)
            #expect(first.sortsBefore(second) == (text.0 < text.1))
            #expect(first.sortsBefore(second) == (first.description < second.description))
        }
        #expect(ids.sorted { $0.sortsBefore($1) } == ids.sorted { $0.rawValue.uuidString < $1.rawValue.uuidString })
    }
}
