// SPDX-License-Identifier: Apache-2.0

/// A strict RFC 8259 parser for one JSON object, written for request bodies.
///
/// It accepts exactly one object surrounded by optional whitespace, in UTF-8 without a byte-order mark,
/// and refuses:
/// - a repeated member name in any object (RFC 7493 §2.3; RFC 6749 §3.2 "MUST NOT be included more than
///   once"). Parsers disagree about which of two duplicates wins — Foundation keeps the first, Go the
///   last — so a body with duplicates could mean different things to a proxy and to us;
/// - invalid UTF-8, unescaped control characters, and `\u` escapes that leave a surrogate unpaired
///   (RFC 7493 §2.1);
/// - nesting deeper than ``maximumDepth``, so no body can exhaust the stack.
///
/// Names are compared after escapes are decoded, so `"grant\u005ftype"` is `grant_type`.
struct JSONObjectParser {
    /// The deepest nesting accepted, counting the top-level object as 1.
    static let maximumDepth = 32

    /// The body, for scanning without bounds checks on every step; the strings the parser reports are
    /// offsets into it.
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Parses `body` as one JSON object and returns its members in order.
    static func parse(_ body: [UInt8]) throws(JSONParseError) -> [(name: JSONText, value: JSONValue)] {
        var members: [(name: JSONText, value: JSONValue)] = []
        try parse(
            body,
            known: { _, _ in nil },
            member: { name, _, value, _ in members.append((name.text(in: body), JSONValue(value, in: body))) }
        )
        return members
    }

    /// Parses `body` as one JSON object, reporting each of its members to `member` in order — without
    /// collecting them, for a caller that keeps only the few it knows. A body that is refused may have
    /// reported some members first.
    ///
    /// `known` numbers the top-level names the caller reads, each below 64 — the same number exactly
    /// for the same bytes, `nil` for every other name — and `member` is given that number with the
    /// member. A repeat of a known name is found by its number, at once; only the other names are
    /// remembered for the check (``MemberNames``), so a body of known names alone — every request's —
    /// compares no name with another.
    ///
    /// Names and string values come as ``ParsedString``s, with the body's bytes to read them in: a
    /// caller that keeps one past the call makes it a ``JSONText`` with ``ParsedString/text(in:)``.
    static func parse(
        _ body: [UInt8],
        known: (ParsedString, UnsafeRawBufferPointer) -> Int?,
        member: (ParsedString, Int?, ParsedValue, UnsafeRawBufferPointer) -> Void
    ) throws(JSONParseError) {
        let result = body.withUnsafeBytes { bytes -> Result<Void, JSONParseError> in
            var parser = JSONObjectParser(bytes: bytes)
            do throws(JSONParseError) {
                return .success(try parser.parseDocument(known: known, member: member))
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    private mutating func parseDocument(
        known: (ParsedString, UnsafeRawBufferPointer) -> Int?,
        member: (ParsedString, Int?, ParsedValue, UnsafeRawBufferPointer) -> Void
    ) throws(JSONParseError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            throw JSONParseError(kind: index < bytes.count ? .notAnObject : .unexpectedEnd, offset: index)
        }
        try parseObject(depth: 1, known: known, member: member)
        skipWhitespace()
        guard index == bytes.count else { throw JSONParseError(kind: .trailingContent, offset: index) }
    }

    // MARK: Structure

    /// Parses an object whose `{` is at the cursor, reporting each member to `member` with the number
    /// `known` gives its name.
    private mutating func parseObject(
        depth: Int,
        known: (ParsedString, UnsafeRawBufferPointer) -> Int?,
        member: (ParsedString, Int?, ParsedValue, UnsafeRawBufferPointer) -> Void
    ) throws(JSONParseError) {
        guard depth <= Self.maximumDepth else { throw JSONParseError(kind: .tooDeep, offset: index) }
        index += 1  // {
        var names = MemberNames()
        // Which known names the object has had, one bit for each number.
        var knownSeen: UInt64 = 0
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw unexpected() }
            let nameOffset = index
            let name = try parseString()
            let number = known(name, bytes)
            if let number {
                precondition((0..<64).contains(number), "a known name's number is below 64")
                let bit: UInt64 = 1 << UInt64(number)
                guard knownSeen & bit == 0 else { throw JSONParseError(kind: .duplicateMember, offset: nameOffset) }
                knownSeen |= bit
            } else {
                guard names.insert(name, in: bytes) else {
                    throw JSONParseError(kind: .duplicateMember, offset: nameOffset)
                }
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw unexpected() }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            member(name, number, value, bytes)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            default:
                throw unexpected()
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) {
        guard depth <= Self.maximumDepth else { throw JSONParseError(kind: .tooDeep, offset: index) }
        index += 1  // [
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            _ = try parseValue(depth: depth)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            default:
                throw unexpected()
            }
        }
    }

    /// Parses the value at the cursor; `depth` is the depth of the container holding it.
    private mutating func parseValue(depth: Int) throws(JSONParseError) -> ParsedValue {
        guard let byte = peek() else { throw unexpected() }
        switch byte {
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "{"):
            try parseObject(depth: depth + 1, known: { _, _ in nil }, member: { _, _, _, _ in })
            return .object
        case UInt8(ascii: "["):
            try parseArray(depth: depth + 1)
            return .array
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try parseNumber()
            return .number
        default:
            throw unexpected()
        }
    }

    // MARK: Scalars

    private mutating func parseLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard peek() == byte else { throw unexpected() }
            index += 1
        }
    }

    /// `number = [ minus ] int [ frac ] [ exp ]` (RFC 8259 §6). The value is never needed, only checked.
    private mutating func parseNumber() throws(JSONParseError) {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek() else { throw JSONParseError(kind: .invalidNumber, offset: start) }
        switch first {
        case UInt8(ascii: "0"):
            index += 1
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            skipDigits()
        default:
            throw JSONParseError(kind: .invalidNumber, offset: start)
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard isDigit(peek()) else { throw JSONParseError(kind: .invalidNumber, offset: start) }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard isDigit(peek()) else { throw JSONParseError(kind: .invalidNumber, offset: start) }
            skipDigits()
        }
    }

    /// Parses the string whose opening quote is at the cursor.
    private mutating func parseString() throws(JSONParseError) -> ParsedString {
        index += 1  // "
        let start = index
        // Fast path: no escapes. ASCII needs no validation; other UTF-8 is left to String(validating:).
        var isASCII = true
        // Eight bytes at a time while none of them ends the fast path: a quote, a backslash, a control
        // character or a byte of a multi-byte sequence. From the first of those, or the last few bytes of
        // the body, byte by byte.
        index = Self.skipPlainASCII(bytes, from: index)
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = start..<index
                index += 1
                guard isASCII || Self.isValidUTF8(UnsafeRawBufferPointer(rebasing: bytes[content])) else {
                    throw JSONParseError(kind: .invalidUTF8, offset: start)
                }
                return .plain(content)
            }
            isASCII = isASCII && byte < 0x80
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw JSONParseError(kind: .unescapedControlCharacter, offset: index) }
            index += 1
        }
        guard index < bytes.count else { throw JSONParseError(kind: .unexpectedEnd, offset: index) }
        return try parseEscapedString(from: start)
    }

    /// Skips plain bytes from `start` eight at a time: the index of the first byte that is a quote, a
    /// backslash, below 0x20 or above 0x7F, found in a word of eight; or, when fewer than eight bytes
    /// remain before one, the index where they start. Every byte it skips is printable ASCII other than
    /// `"` and `\\`.
    ///
    /// The tests are the classic ones on a 64-bit word (each byte's high bit marks a hit): `x ^ 0x22…`
    /// has a zero byte where `x` has a quote, and `(y - 0x01…) & ~y & 0x80…` flags the zero bytes of `y`;
    /// `(x - 0x20…) & ~x & 0x80…` likewise flags bytes below 0x20, and `x & 0x80…` bytes above 0x7F. The
    /// borrows make false positives, but only above a true hit, so the lowest flagged byte is the first
    /// hit, and the skip goes straight to it rather than leaving the word's plain bytes to a loop of one
    /// byte.
    @inline(__always)
    static func skipPlainASCII(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        let (ones, highBits) = (ByteLanes.ones, ByteLanes.highBits)
        var index = start
        while bytes.count - index >= 8 {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let hits =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                | ((word &- ones &* 0x20) & ~word) | word
            let flagged = hits & highBits
            if flagged != 0 { return index + flagged.trailingZeroBitCount / 8 }
            index += 8
        }
        return index
    }

    /// The slow path of ``parseString()``: decodes escapes from `start` up to the closing quote.
    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> ParsedString {
        var decoded = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard decoded.withUnsafeBytes({ Self.isValidUTF8($0) }) else {
                    throw JSONParseError(kind: .invalidUTF8, offset: start)
                }
                return .decoded(decoded)
            case UInt8(ascii: "\\"):
                let escapeOffset = index
                index += 1
                guard index < bytes.count else { throw JSONParseError(kind: .unexpectedEnd, offset: index) }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape(escapeOffset: escapeOffset)
                    decoded.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw JSONParseError(kind: .invalidEscape, offset: escapeOffset)
                }
            default:
                guard byte >= 0x20 else { throw JSONParseError(kind: .unescapedControlCharacter, offset: index) }
                decoded.append(byte)
                index += 1
            }
        }
        throw JSONParseError(kind: .unexpectedEnd, offset: index)
    }

    /// Whether `bytes` are well-formed UTF-8 (RFC 3629 §4: no overlong forms, no surrogates, nothing past
    /// U+10FFFF) — the standard library's validation, which `String(validating:)` applies.
    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    /// Parses the four hex digits after `\u` — and a following `\uDC00`–`\uDFFF` when they are a high
    /// surrogate — into one scalar. An unpaired surrogate is refused (RFC 7493 §2.1).
    private mutating func parseUnicodeEscape(escapeOffset: Int) throws(JSONParseError) -> Unicode.Scalar {
        let first = try parseHexQuad(escapeOffset: escapeOffset)
        switch first {
        case 0xD800...0xDBFF:
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw JSONParseError(kind: .loneSurrogate, offset: escapeOffset)
            }
            index += 2
            let second = try parseHexQuad(escapeOffset: escapeOffset)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONParseError(kind: .loneSurrogate, offset: escapeOffset)
            }
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else {
                throw JSONParseError(kind: .loneSurrogate, offset: escapeOffset)
            }
            return scalar
        case 0xDC00...0xDFFF:
            throw JSONParseError(kind: .loneSurrogate, offset: escapeOffset)
        default:
            guard let scalar = Unicode.Scalar(first) else {
                throw JSONParseError(kind: .invalidEscape, offset: escapeOffset)
            }
            return scalar
        }
    }

    private mutating func parseHexQuad(escapeOffset: Int) throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw JSONParseError(kind: .unexpectedEnd, offset: bytes.count) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw JSONParseError(kind: .invalidEscape, offset: escapeOffset)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    // MARK: Cursor

    /// The byte at the cursor, or `nil` at the end.
    @inline(__always)
    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8?) -> Bool {
        guard let byte else { return false }
        return byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while isDigit(peek()) { index += 1 }
    }

    /// Skips JSON whitespace: space, tab, line feed, carriage return (RFC 8259 §2).
    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            index += 1
        }
    }

    private func unexpected() -> JSONParseError {
        JSONParseError(kind: index < bytes.count ? .unexpectedByte : .unexpectedEnd, offset: index)
    }
}
