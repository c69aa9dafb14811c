// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct JSONObjectParserTests {
    private func parse(_ text: String) throws(JSONParseError) -> [(name: JSONText, value: JSONValue)] {
        try JSONObjectParser.parse(Array(text.utf8))
    }

    private func parse(_ bytes: [UInt8]) throws(JSONParseError) -> [(name: JSONText, value: JSONValue)] {
        try JSONObjectParser.parse(bytes)
    }

    @Test("Members come back in order with their values")
    func members() throws {
        let members = try parse(
            #" { "a" : "x\n\u00e9\ud83d\ude00" , "b":true,"c":false,"d":null,"e":-1.5e+3,"f":{"g":[1,{}]},"h":[] } "#
        )
        #expect(members.map(\.name) == ["a", "b", "c", "d", "e", "f", "h"])
        #expect(members[0].value == .string("x\né😀"))
        #expect(members[1].value == .bool(true))
        #expect(members[2].value == .bool(false))
        #expect(members[3].value == .null)
        #expect(members[4].value == .number)
        #expect(members[5].value == .object)
        #expect(members[6].value == .array)
    }

    @Test("The empty object parses")
    func emptyObject() throws {
        #expect(try parse("{}").isEmpty)
    }

    @Test(
        "Malformed bodies are refused with the right kind",
        arguments: [
            ("", JSONParseError.Kind.unexpectedEnd),
            ("[]", .notAnObject),
            ("\"x\"", .notAnObject),
            ("{", .unexpectedEnd),
            ("{\"a\"}", .unexpectedByte),
            ("{\"a\":}", .unexpectedByte),
            ("{\"a\":1,}", .unexpectedByte),
            ("{a:1}", .unexpectedByte),
            ("{'a':1}", .unexpectedByte),
            ("{\"a\":01}", .unexpectedByte),
            ("{\"a\":1.}", .invalidNumber),
            ("{\"a\":-}", .invalidNumber),
            ("{\"a\":1e}", .invalidNumber),
            ("{\"a\":tru}", .unexpectedByte),
            ("{\"a\":\"\\x\"}", .invalidEscape),
            ("{\"a\":\"\\u12g4\"}", .invalidEscape),
            ("{\"a\":\"\\ud800\"}", .loneSurrogate),
            ("{\"a\":\"\\udc00\"}", .loneSurrogate),
            ("{\"a\":\"\\ud800\\u0041\"}", .loneSurrogate),
            ("{\"a\":\"line\nbreak\"}", .unescapedControlCharacter),
            ("{\"a\":1} x", .trailingContent),
            ("{\"a\":1}{}", .trailingContent),
            ("{\"a\":1,\"a\":2}", .duplicateMember),
            ("{\"grant_type\":1,\"grant\\u005ftype\":2}", .duplicateMember),
            ("{\"x\":{\"b\":1,\"b\":2}}", .duplicateMember),
            ("\u{FEFF}{}", .notAnObject),
        ]
    )
    func malformed(text: String, kind: JSONParseError.Kind) {
        #expect(throws: JSONParseError.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.kind == kind)
        }
    }

    @Test(
        "Invalid UTF-8 is refused",
        arguments: [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF], [0xE2, 0x82]] as [[UInt8]]
    )
    func invalidUTF8(sequence: [UInt8]) {
        let body = Array("{\"a\":\"".utf8) + sequence + Array("\"}".utf8)
        #expect(throws: JSONParseError(kind: .invalidUTF8, offset: 6)) { try parse(body) }
    }

    @Test("Nesting is limited, so no body can exhaust the stack")
    func depth() throws {
        let allowed = "{\"a\":" + String(repeating: "[", count: 30) + String(repeating: "]", count: 30) + "}"
        #expect(try parse(allowed).count == 1)
        let deep = "{\"a\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(throws: JSONParseError.self) { try parse(deep) }
    }

    @Test("Duplicates are compared by bytes: canonically equivalent names are distinct")
    func duplicatesByBytes() throws {
        // U+00E9 and e + U+0301 are canonically equivalent, but different names to every JSON parser.
        let members = try parse("{\"\u{E9}\":1,\"e\u{301}\":2}")
        #expect(members.count == 2)
    }

    @Test(
        "Around the switch to a set, every count of distinct members parses and a repeat of any one is refused",
        arguments: (MemberNames.linearLimit - 2)...(MemberNames.linearLimit + 2)
    )
    func duplicatesAroundTheSwitch(count: Int) throws {
        let names = (0..<count).map { "\"m\($0)\":\($0)" }
        #expect(try parse("{" + names.joined(separator: ",") + "}").count == count)
        #expect(refusedRepeats(after: names, spelled: (0..<count).map { "m\($0)" }) == Array(0..<count))
        // A new name last, after the switch or right at it, is still only new.
        #expect(try parse("{" + names.joined(separator: ",") + ",\"new\":0}").count == count + 1)
    }

    @Test("Names that are prefixes of each other are distinct, and a repeat among names of every length is refused")
    func duplicatesAmongLengths() throws {
        #expect(try parse(#"{"a":1,"ab":2,"abc":3,"":4,"b":5}"#).count == 5)
        for repeated in ["a", "ab", "abc", ""] {
            let text = #"{"a":1,"ab":2,"abc":3,"":4,"\#(repeated)":5}"#
            #expect(throws: JSONParseError.self, "\(text)") { try parse(text) }
        }
    }

    @Test(
        "A name spelled with escapes and the same name without are duplicates, whichever comes first",
        arguments: [
            #"{"ab":1,"a\u0062":2}"#, #"{"a\u0062":1,"ab":2}"#, #"{"\u0061b":1,"a\u0062":2}"#,
            #"{"x":0,"ab":1,"y":0,"\u0061\u0062":2}"#,
        ]
    )
    func duplicatesAcrossEscapes(text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.kind == .duplicateMember)
        }
    }

    @Test(
        "Names with and without escapes, mixed, around the switch to a set: all distinct parse, any repeat is refused",
        arguments: (MemberNames.linearLimit - 1)...(MemberNames.linearLimit + 1)
    )
    func escapedNamesAroundTheSwitch(count: Int) throws {
        // Every other name spelled with an escape (`\u006d` is `m`), every repeat spelled the other way.
        let spelled = (0..<count).map { $0.isMultiple(of: 2) ? "\\u006d\($0)" : "m\($0)" }
        let respelled = (0..<count).map { $0.isMultiple(of: 2) ? "m\($0)" : "\\u006d\($0)" }
        let names = spelled.enumerated().map { "\"\($1)\":\($0)" }
        let members = try parse("{" + names.joined(separator: ",") + "}")
        #expect(members.map(\.name) == (0..<count).map { JSONText("m\($0)") })
        #expect(refusedRepeats(after: names, spelled: respelled) == Array(0..<count))
    }

    /// The indexes of `repeats` that the parser refuses as a duplicate member when each, alone, follows
    /// the members `names`.
    private func refusedRepeats(after names: [String], spelled repeats: [String]) -> [Int] {
        repeats.indices.filter { index in
            do throws(JSONParseError) {
                _ = try parse("{" + names.joined(separator: ",") + ",\"\(repeats[index])\":0}")
                return false
            } catch {
                return error.kind == .duplicateMember
            }
        }
    }

    /// With the endpoint's known names numbered (``RequestParameters/number(of:in:)``), a repeat of one is
    /// found by its number and the others by ``MemberNames``: every body must get the answer it gets with
    /// no name known — the same members, or the same duplicate at the same offset. Bodies of known names
    /// (plain and spelled with an escape), near-misses, other names and nested objects, in random orders
    /// with repeats, past the switch to a set too; seeded, so a failure repeats.
    @Test("Known names numbered for the parser change no answer: every body parses or is refused as without")
    func knownNamesChangeNoAnswer() {
        let known = [
            "grant_type", "client_id", "code", "redirect_uri", "code_verifier", "refresh_token", "studio_session",
        ]
        // Each known name plain and with its first letter escaped; near-misses; others; a nested object.
        let vocabulary =
            known
            + known.map { name in
                "\\u00" + String(name.utf8.first!, radix: 16) + String(name.dropFirst())
            } + ["grant_typ", "grant_types", "code_", "CODE", "client-id", ""] + (0..<20).map { "m\($0)" }
        var generator = SplitMix(state: 0x7ca4_4f5e)
        for _ in 0..<4_000 {
            let count = Int.random(in: 1...24, using: &generator)
            let members = (0..<count).map { index -> String in
                let name = vocabulary.randomElement(using: &generator)!
                let value =
                    Int.random(in: 0..<8, using: &generator) == 0
                    ? "{\"\(known.randomElement(using: &generator)!)\":1,\"\(name)\":2}" : "\(index)"
                return "\"\(name)\":\(value)"
            }
            let body = Array(("{" + members.joined(separator: ",") + "}").utf8)
            #expect(
                answer(body, numbering: true) == answer(body, numbering: false),
                "\(String(decoding: body, as: UTF8.self))"
            )
        }
    }

    /// The members `body` parses to — each name's text and its number, which must be the one
    /// ``RequestParameters/number(of:in:)`` gives it — or the kind and offset of the error it is refused
    /// with; with `numbering`, the endpoint's known names are numbered for the parser.
    private func answer(_ body: [UInt8], numbering: Bool) -> String {
        var seen: [String] = []
        do throws(JSONParseError) {
            try JSONObjectParser.parse(
                body,
                known: { numbering ? RequestParameters.number(of: $0, in: $1) : nil },
                member: { name, number, _, source in
                    let text = name.text(in: body).string
                    let expected = numbering ? RequestParameters.number(of: name, in: source) : nil
                    seen.append(number == expected ? text : "\(text) numbered \(String(describing: number))")
                }
            )
            return seen.joined(separator: " ")
        } catch {
            return "\(error.kind) at \(error.offset)"
        }
    }

    @Test("Many members switch duplicate detection to a set without changing its answer")
    func manyMembers() throws {
        let names = (0..<40).map { "\"m\($0)\":\($0)" }
        #expect(try parse("{" + names.joined(separator: ",") + "}").count == 40)
        #expect(throws: JSONParseError.self) { try parse("{" + names.joined(separator: ",") + ",\"m3\":0}") }
    }
}
