// SPDX-License-Identifier: Apache-2.0

/// The parameters the endpoint reads, picked out of the body's top-level members as the parser reports
/// them; every other member is ignored (RFC 6749 §3.2). The parser has already refused a repeated name,
/// so each parameter is set at most once.
struct RequestParameters {
    private var grantType: JSONValue?
    private var clientID: JSONValue?
    private var code: JSONValue?
    private var redirectURI: JSONValue?
    private var codeVerifier: JSONValue?
    private var refreshToken: JSONValue?
    private var studioSession: JSONValue?

    init() {}

    /// Keeps `value` when `name` is a parameter the endpoint reads; a name is matched on its length first,
    /// then byte for byte.
    mutating func take(_ name: JSONText, _ value: JSONValue) {
        func `is`(_ parameter: StaticString) -> Bool { name.equals(parameter) }
        switch name.bytes.count {
        case 4 where `is`("code"): code = value
        case 9 where `is`("client_id"): clientID = value
        case 10 where `is`("grant_type"): grantType = value
        case 12 where `is`("redirect_uri"): redirectURI = value
        case 13 where `is`("code_verifier"): codeVerifier = value
        case 13 where `is`("refresh_token"): refreshToken = value
        case 14 where `is`("studio_session"): studioSession = value
        default: break
        }
    }

    var grantTypeText: JSONText? { get throws(EndpointError) { try Self.string(grantType, "grant_type") } }
    var clientIDText: JSONText? { get throws(EndpointError) { try Self.string(clientID, "client_id") } }
    var codeText: JSONText? { get throws(EndpointError) { try Self.string(code, "code") } }
    var redirectURIText: JSONText? { get throws(EndpointError) { try Self.string(redirectURI, "redirect_uri") } }
    var codeVerifierText: JSONText? { get throws(EndpointError) { try Self.string(codeVerifier, "code_verifier") } }
    var refreshTokenText: JSONText? { get throws(EndpointError) { try Self.string(refreshToken, "refresh_token") } }
    var studioSessionFlag: Bool? { get throws(EndpointError) { try Self.bool(studioSession, "studio_session") } }

    /// The string `value` of parameter `name`; `nil` when absent, `null` or empty.
    private static func string(_ value: JSONValue?, _ name: StaticString) throws(EndpointError) -> JSONText? {
        switch value {
        case nil, .null: return nil
        case .string(let text): return text.isEmpty ? nil : text
        case .number, .bool, .object, .array: throw EndpointError(.invalidParameterType(name: "\(name)"))
        }
    }

    /// The boolean `value` of parameter `name`; `nil` when absent, `null` or empty.
    private static func bool(_ value: JSONValue?, _ name: StaticString) throws(EndpointError) -> Bool? {
        switch value {
        case nil, .null: return nil
        case .bool(let flag): return flag
        case .string(let text) where text.isEmpty: return nil
        case .string, .number, .object, .array: throw EndpointError(.invalidParameterType(name: "\(name)"))
        }
    }
}
