// SPDX-License-Identifier: Apache-2.0

/// Why a body is not one well-formed JSON object, and where.
struct JSONParseError: Error, Equatable {
    enum Kind: Equatable {
        case notAnObject
        case unexpectedEnd
        case unexpectedByte
        case invalidEscape
        case invalidUTF8
        case unescapedControlCharacter
        case loneSurrogate
        case invalidNumber
        case tooDeep
        case duplicateMember
        case trailingContent
    }

    var kind: Kind
    /// The byte offset at which the problem was found.
    var offset: Int

    /// A short, secret-free explanation for the error response.
    var detail: String {
        let what =
            switch kind {
            case .notAnObject: "the body must be an object"
            case .unexpectedEnd: "the body ends early"
            case .unexpectedByte: "unexpected character"
            case .invalidEscape: "invalid escape sequence"
            case .invalidUTF8: "invalid UTF-8"
            case .unescapedControlCharacter: "unescaped control character in a string"
            case .loneSurrogate: "unpaired UTF-16 surrogate escape"
            case .invalidNumber: "invalid number"
            case .tooDeep: "nested more than \(JSONObjectParser.maximumDepth) levels"
            case .duplicateMember: "repeated member name"
            case .trailingContent: "content after the object"
            }
        return "\(what) at byte \(offset)"
    }
}
