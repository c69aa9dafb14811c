// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthTesting

@testable import TilecastAuth

/// Rules T-1–T-7 and P-1–P-6: bad input gets a JSON error in one envelope, with the right status, and changes nothing.
struct BadInputTests {
    /// The request body of the endpoint's API document, verbatim.
    static let specExampleBody =
        #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"example","redirect_uri":"https://example.com","code_verifier":"example","refresh_token":"example","studio_session":false}"#

    @Test("The spec's example body, sent as-is, gets a 400 JSON error")
    func specExample() async throws {
        let harness = try Harness()
        let response = await harness.post(text: Self.specExampleBody)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_request")
        #expect(response.json["error_description"] is String)
        #expect(response.hasNoStoreJSONHeaders)
    }

    @Test("The spec's example with a real code, verifier and callback succeeds, other members ignored")
    func specExampleWithRealValues() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let body = Self.specExampleBody
            .replacingOccurrences(of: #""code":"example""#, with: #""code":"\#(code)""#)
            .replacingOccurrences(of: "https://example.com", with: Harness.callback)
            .replacingOccurrences(of: #""code_verifier":"example""#, with: #""code_verifier":"\#(verifier)""#)
        let response = await harness.post(text: body)
        #expect(response.status == 200)
        #expect(response.authenticated == true)
        #expect(response.setCookies.count == 1)
    }

    /// A malformed request and the refusal it gets.
    struct MalformedRequest: Sendable, CustomTestStringConvertible {
        var description: String
        var method: String
        var contentType: String?
        var body: String
        var status: Int
        var error: String

        var testDescription: String { description }
    }

    /// Every malformed request.
    static let cases: [MalformedRequest] = [
        MalformedRequest(
            description: "GET",
            method: "GET",
            contentType: "application/json",
            body: "{}",
            status: 405,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "lowercase post",
            method: "post",
            contentType: "application/json",
            body: "{}",
            status: 405,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "no content type",
            method: "POST",
            contentType: nil,
            body: "{}",
            status: 415,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "form encoding",
            method: "POST",
            contentType: "application/x-www-form-urlencoded",
            body: "grant_type=refresh_token",
            status: 415,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "text/plain",
            method: "POST",
            contentType: "text/plain",
            body: "{}",
            status: 415,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "latin-1",
            method: "POST",
            contentType: "application/json; charset=iso-8859-1",
            body: "{}",
            status: 415,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "json+suffix",
            method: "POST",
            contentType: "application/jsonx",
            body: "{}",
            status: 415,
            error: "invalid_request"
        ),
        // A ";" inside a quoted parameter value is not a parameter boundary (RFC 9110 §5.6.4): the media
        // type is JSON, and the empty object is then refused for its missing grant_type, not with 415.
        MalformedRequest(
            description: "quoted ;",
            method: "POST",
            contentType: #"application/json; foo="a;charset=utf-16""#,
            body: "{}",
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "empty body",
            method: "POST",
            contentType: "application/json",
            body: "",
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "not JSON",
            method: "POST",
            contentType: "application/json",
            body: "grant_type=refresh_token",
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "array",
            method: "POST",
            contentType: "application/json",
            body: "[]",
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "truncated",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_to"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "duplicate grant_type",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"refresh_token","grant_type":"authorization_code","client_id":"tilecast-ios","refresh_token":"x"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "duplicate via escape",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"client_id":"tilecast-ios","client\u005fid":"tilecast-web","grant_type":"refresh_token","refresh_token":"x"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "missing grant_type",
            method: "POST",
            contentType: "application/json",
            body: #"{"client_id":"tilecast-ios"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "null grant_type",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":null,"client_id":"tilecast-ios"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "numeric grant_type",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":1,"client_id":"tilecast-ios"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "unknown grant_type",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"password","client_id":"tilecast-ios"}"#,
            status: 400,
            error: "unsupported_grant_type"
        ),
        MalformedRequest(
            description: "client_credentials",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"client_credentials"}"#,
            status: 400,
            error: "unsupported_grant_type"
        ),
        MalformedRequest(
            description: "missing client_id",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","refresh_token":"x"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "empty client_id",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","client_id":"","refresh_token":"x"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "array client_id",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","client_id":["tilecast-ios"],"refresh_token":"x"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "other client_id",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","client_id":"tilecast-cli","refresh_token":"x"}"#,
            status: 400,
            error: "invalid_client"
        ),
        MalformedRequest(
            description: "missing refresh_token",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","client_id":"tilecast-ios"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "numeric refresh_token",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":7}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "string studio_session",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"x","studio_session":"true"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "missing code",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","redirect_uri":"tilecast-ios://oauth/callback","code_verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "missing redirect_uri",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"x","code_verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "missing code_verifier",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"x","redirect_uri":"tilecast-ios://oauth/callback"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "short code_verifier",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"x","redirect_uri":"tilecast-ios://oauth/callback","code_verifier":"short"}"#,
            status: 400,
            error: "invalid_request"
        ),
        MalformedRequest(
            description: "unknown code",
            method: "POST",
            contentType: "application/json",
            body:
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"x","redirect_uri":"tilecast-ios://oauth/callback","code_verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}"#,
            status: 400,
            error: "invalid_grant"
        ),
        MalformedRequest(
            description: "unknown refresh token",
            method: "POST",
            contentType: "application/json",
            body: #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"x"}"#,
            status: 400,
            error: "invalid_grant"
        ),
    ]

    @Test(
        "Malformed requests get the right status and code, in the JSON envelope, and change nothing",
        arguments: cases
    )
    func malformed(_ request: MalformedRequest) async throws {
        let (description, method, contentType, body, status, code) = (
            request.description, request.method, request.contentType, request.body, request.status, request.error
        )
        let harness = try Harness()
        _ = try await harness.signIn()
        let before = harness.memory.snapshot()
        var headers = HeaderFields()
        if let contentType {
            headers.append(name: "Content-Type", value: contentType)
        }
        let response = await harness.post(body: Array(body.utf8), method: method, headers: headers)
        #expect(response.status == status, "\(description)")
        #expect(response.errorCode == code, "\(description)")
        #expect(response.json["error_description"] is String, "\(description)")
        #expect(Set(response.json.keys) == ["error", "error_description"], "\(description)")
        #expect(response.hasNoStoreJSONHeaders, "\(description)")
        #expect(response.setCookies.isEmpty, "\(description)")
        #expect(harness.memory.snapshot() == before, "\(description)")
    }

    @Test("405 names the allowed method")
    func allowHeader() async throws {
        let harness = try Harness()
        let response = await harness.post(body: [], method: "GET")
        #expect(response.response.headers["Allow"] == "POST")
    }

    @Test(
        "A JSON content type with charset utf-8 or other parameters is accepted",
        arguments: [
            "application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\"", "application/json ; foo=bar",
            "application/json; charset=utf8", "application/json;",
        ]
    )
    func contentTypeParameters(contentType: String) async throws {
        let harness = try Harness()
        let response = await harness.post(body: Array("{}".utf8), headers: ["Content-Type": contentType])
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_request")
    }

    @Test("A body over the limit gets 413")
    func bodyTooLarge() async throws {
        let harness = try Harness(configuration: EngineConfiguration(maximumBodyBytes: 1024))
        let padding = String(repeating: "a", count: 1100)
        let response = await harness.post(text: #"{"pad":"\#(padding)"}"#)
        #expect(response.status == 413)
        #expect(response.errorCode == "invalid_request")
    }

    @Test("Unknown members are ignored, and so are the other grant type's members whatever their type")
    func ignoredMembers() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let response = await harness.exchange(
            code: code,
            verifier: verifier,
            extra: ["refresh_token": 12, "studio_session": "yes", "scope": ["x"], "nonce": ["deep": [1, 2]]]
        )
        #expect(response.status == 200)

        let refresh = await harness.post(json: [
            "grant_type": "refresh_token", "client_id": "tilecast-ios",
            "refresh_token": try #require(response.refreshToken), "code": 5, "code_verifier": false,
        ])
        #expect(refresh.status == 200)
    }

    @Test(
        "A parameter is its name byte for byte after escapes: look-alikes of the same length or one byte off are ignored"
    )
    func parameterNames() async throws {
        let harness = try Harness()
        let verifier = harness.newVerifier()
        let code = try await harness.issueCode(verifier: verifier)
        let callback = "tilecast-ios://oauth/callback"
        // Near misses of every parameter the endpoint reads: case, a byte more or less, another name of
        // the same length. Each is ignored, so each parameter reads as missing, in the fixed order.
        let misses: [(body: String, missing: String)] = [
            (#"{"Grant_type":"authorization_code","client_id":"tilecast-ios"}"#, "grant_type"),
            (#"{"grant_type":"authorization_code","client_ie":"tilecast-ios"}"#, "client_id"),
            (#"{"grant_type":"authorization_code","client_id":"tilecast-ios","codes":"x"}"#, "code"),
            (
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"x","redirect_urI":"y"}"#,
                "redirect_uri"
            ),
            (
                #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"x","redirect_uri":"y","refresh_token":"z"}"#,
                "code_verifier"
            ),
            (#"{"grant_type":"refresh_token","client_id":"tilecast-ios","code_verifier":"z"}"#, "refresh_token"),
        ]
        for (body, missing) in misses {
            let response = await harness.post(text: body)
            #expect(response.status == 400, "\(body)")
            #expect(harness.observer.refusals.last == .missingParameter(name: missing), "\(body)")
        }
        // A name spelled with escapes is the same parameter (RFC 8259 §7), so this exchange succeeds.
        let escaped =
            #"{"grant\u005ftype":"authorization_code","client_id":"tilecast-ios","\u0063ode":"\#(code)","redirect_uri":"\#(callback)","code_verifier":"\#(verifier)","studio_sessioN":7}"#
        let response = await harness.post(text: escaped)
        #expect(response.status == 200)
    }

    @Test(
        "A browser Origin that is not allowed is refused with 400 (login CSRF; 403 means an inactive account)",
        arguments: [
            (["https://evil.example"], true), (["null"], true),
            (["https://studio.tilecast.test", "https://studio.tilecast.test"], true),
            (["https://studio.tilecast.test"], false),
        ]
    )
    func origin(origins: [String], refused: Bool) async throws {
        let harness = try Harness(configuration: EngineConfiguration(allowedOrigins: ["https://studio.tilecast.test"]))
        _ = try await harness.signIn()
        let before = harness.memory.snapshot()
        var headers: HeaderFields = ["Content-Type": "application/json"]
        for origin in origins {
            headers.append(name: "Origin", value: origin)
        }
        let response = await harness.post(body: Array("{}".utf8), headers: headers)
        #expect(response.status == 400)
        #expect(response.errorCode == "invalid_request")
        #expect((harness.observer.refusals.last == .crossOriginRequest) == refused)
        #expect(harness.memory.snapshot() == before)
    }

    @Test(
        "Sec-Fetch-Site other than same-origin or none, without an allowed origin, is refused",
        arguments: [("cross-site", true), ("same-site", true), ("same-origin", false), ("none", false)]
    )
    func fetchMetadata(site: String, refused: Bool) async throws {
        let harness = try Harness()
        let response = await harness.post(
            body: Array("{}".utf8),
            headers: ["Content-Type": "application/json", "Sec-Fetch-Site": site]
        )
        #expect(response.status == 400)
        #expect((harness.observer.refusals.last == .crossOriginRequest) == refused)
    }

    /// A request's header fields and the refusal its body `{}` gets: screening's, or, once screening lets
    /// it through, the body's first missing parameter.
    struct ScreenedFields: Sendable, CustomTestStringConvertible {
        var fields: [(name: String, value: String)]
        var refusal: RefusalReason
        var testDescription: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "; ") }
    }

    static let screenedFields: [ScreenedFields] = {
        let json = (name: "Content-Type", value: "application/json")
        let passes = RefusalReason.missingParameter(name: "grant_type")
        let allowed = "https://studio.tilecast.test"
        return [
            ScreenedFields(fields: [json], refusal: passes),
            ScreenedFields(fields: [("cONTENT-tYPE", "application/json")], refusal: passes),
            ScreenedFields(fields: [json, json], refusal: .unsupportedMediaType),
            ScreenedFields(fields: [("Content-Typf", "application/json")], refusal: .unsupportedMediaType),
            ScreenedFields(fields: [("Content-Type ", "application/json")], refusal: .unsupportedMediaType),
            ScreenedFields(fields: [("User-Agent", "Tilecast/3.2")], refusal: .unsupportedMediaType),
            ScreenedFields(fields: [("ORIGIN", "https://evil.example"), json], refusal: .crossOriginRequest),
            ScreenedFields(fields: [("Origin", "https://evil.example")], refusal: .crossOriginRequest),
            ScreenedFields(fields: [("Origim", "https://evil.example"), json], refusal: passes),
            ScreenedFields(fields: [("origin", allowed), ("Sec-Fetch-Site", "cross-site"), json], refusal: passes),
            ScreenedFields(fields: [("Origin", allowed), ("Origin", allowed), json], refusal: .crossOriginRequest),
            ScreenedFields(fields: [json, ("SEC-FETCH-SITE", "cross-site")], refusal: .crossOriginRequest),
            ScreenedFields(
                fields: [("Sec-Fetch-Site", "none"), ("Sec-Fetch-Site", "same-site"), json],
                refusal: .crossOriginRequest
            ),
            ScreenedFields(
                fields: [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "none"), json],
                refusal: .crossOriginRequest
            ),
            ScreenedFields(
                fields: [("Sec-Fetch-Site", "none"), ("sec-fetch-site", "same-origin"), json],
                refusal: passes
            ),
            ScreenedFields(fields: [("Sec-Fetch-Sitf", "cross-site"), json], refusal: passes),
        ]
    }()

    @Test(
        "Screening finds Origin, Sec-Fetch-Site and Content-Type in any case, counts repeats, and ignores near misses",
        arguments: screenedFields
    )
    func screening(_ screened: ScreenedFields) async throws {
        let harness = try Harness(configuration: EngineConfiguration(allowedOrigins: ["https://studio.tilecast.test"]))
        let response = await harness.post(body: Array("{}".utf8), headers: HeaderFields(screened.fields))
        #expect(harness.observer.refusals.last == screened.refusal)
        #expect(response.status != 200)
    }

    @Test("No body of random bytes crashes the engine or gets a 5xx")
    func randomBodies() async throws {
        let harness = try Harness()
        let fragments = [
            "{", "}", "[", "]", "\"", ":", ",", "grant_type", "refresh_token", "authorization_code", "client_id",
            "tilecast-ios", "\\u0000", "\\ud800", "null", "true", "-0.1e5", " ", "\u{0}", "\u{FFFF}", "é",
        ]
        var generator = SplitMix(state: 42)
        for _ in 0..<2000 {
            var body: [UInt8] = []
            for _ in 0..<Int(generator.next() % 24) {
                if generator.next() % 4 == 0 {
                    body.append(UInt8(truncatingIfNeeded: generator.next()))
                } else {
                    body += Array(fragments[Int(generator.next() % UInt64(fragments.count))].utf8)
                }
            }
            let response = await harness.post(body: body)
            #expect((400..<500).contains(response.status))
            #expect(response.errorCode != nil)
        }
    }
}
