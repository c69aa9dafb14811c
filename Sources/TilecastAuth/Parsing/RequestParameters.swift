// SPDX-License-Identifier: Apache-2.0

/// The parameters the endpoint reads, picked out of the body's top-level members as the parser reports
/// them; every other member is ignored (RFC 6749 §3.2). The parser has already refused a repeated name,
/// so each parameter is set at most once.
struct RequestParameters {
    private var grantType: ParsedValue?
    private var clientID: ParsedValue?
    private var code: ParsedValue?
    private var redirectURI: ParsedValue?
    private var codeVerifier: ParsedValue?
    private var refreshToken: ParsedValue?
    private var studioSession: ParsedValue?

    init() {}

    /// The parameters the endpoint reads, numbered for the parser (``JSONObjectParser``'s `known`).
    enum Parameter: Int {
        case grantType, clientID, code, redirectURI, codeVerifier, refreshToken, studioSession
    }

    /// The number of the parameter `name`, parsed from `source`, names; `nil` for a member the endpoint
    /// ignores. A name is matched on its length first, then byte for byte.
    static func number(of name: ParsedString, in source: UnsafeRawBufferPointer) -> Int? {
        func `is`(_ parameter: StaticString) -> Bool { name.equals(parameter, in: source) }
        let length =
            switch name {
            case .plain(let range): range.count
            case .decoded(let bytes): bytes.count
            }
        let parameter: Parameter? =
            switch length {
            case 4 where `is`("code"): .code
            case 9 where `is`("client_id"): .clientID
            case 10 where `is`("grant_type"): .grantType
            case 12 where `is`("redirect_uri"): .redirectURI
            case 13 where `is`("code_verifier"): .codeVerifier
            case 13 where `is`("refresh_token"): .refreshToken
            case 14 where `is`("studio_session"): .studioSession
            default: nil
            }
        return parameter?.rawValue
    }

    /// Keeps `value` for the parameter numbered `number` (``number(of:in:)``); ignores a member of no
    /// number. A value is kept as the parser found it — for a string without escapes, its offsets in
    /// the body — so keeping it retains nothing.
    mutating func take(_ number: Int?, _ value: ParsedValue) {
        guard let number, let parameter = Parameter(rawValue: number) else { return }
        switch parameter {
        case .grantType: grantType = value
        case .clientID: clientID = value
        case .code: code = value
        case .redirectURI: redirectURI = value
        case .codeVerifier: codeVerifier = value
        case .refreshToken: refreshToken = value
        case .studioSession: studioSession = value
        }
    }

    // The string parameters; `nil` when absent, `null` or empty. `grant_type` and `client_id` are only
    // compared, as the parser found them; the others are kept, as text of `body`, which must be the body
    // they were parsed from (their offsets are into it).
    var parsedGrantType: ParsedString? { get throws(EndpointError) { try Self.string(grantType, "grant_type") } }
    var parsedClientID: ParsedString? { get throws(EndpointError) { try Self.string(clientID, "client_id") } }
    func code(in body: [UInt8]) throws(EndpointError) -> JSONText? {
        try Self.string(code, "code")?.text(in: body)
    }
    func redirectURI(in body: [UInt8]) throws(EndpointError) -> JSONText? {
        try Self.string(redirectURI, "redirect_uri")?.text(in: body)
    }
    func codeVerifier(in body: [UInt8]) throws(EndpointError) -> JSONText? {
        try Self.string(codeVerifier, "code_verifier")?.text(in: body)
    }
    func refreshToken(in body: [UInt8]) throws(EndpointError) -> JSONText? {
        try Self.string(refreshToken, "refresh_token")?.text(in: body)
    }
    var studioSessionFlag: Bool? { get throws(EndpointError) { try Self.bool(studioSession, "studio_session") } }

    /// The string `value` of parameter `name`; `nil` when absent, `null` or empty.
    private static func string(_ value: ParsedValue?, _ name: StaticString) throws(EndpointError) -> ParsedString? {
        switch value {
        case nil, .null: return nil
        case .string(let text): return text.isEmpty ? nil : text
        case .number, .bool, .object, .array: throw EndpointError(.invalidParameterType(name: "\(name)"))
        }
    }

    /// The boolean `value` of parameter `name`; `nil` when absent, `null` or empty.
    private static func bool(_ value: ParsedValue?, _ name: StaticString) throws(EndpointError) -> Bool? {
        switch value {
        case nil, .null: return nil
        case .bool(let flag): return flag
        case .string(let text) where text.isEmpty: return nil
        case .string, .number, .object, .array: throw EndpointError(.invalidParameterType(name: "\(name)"))
        }
    }
}
