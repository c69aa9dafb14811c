// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// An endpoint response with the parts tests look at, parsed.
struct TestResponse {
    let response: EndpointResponse

    var status: Int { response.status }

    /// The body as a JSON object; empty when it is not one (which a test will notice).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    var data: [String: Any]? { json["data"] as? [String: Any] }
    var authenticated: Bool? { data?["authenticated"] as? Bool }
    var credential: [String: Any]? { data?["credential"] as? [String: Any] }
    var accessToken: String? { credential?["access_token"] as? String }
    var refreshToken: String? { credential?["refresh_token"] as? String }
    var errorCode: String? { json["error"] as? String }

    var setCookies: [String] { response.headers.values(for: "Set-Cookie") }

    /// The session id of the only `Set-Cookie`, if there is exactly one.
    var sessionID: String? {
        guard setCookies.count == 1, let pair = setCookies[0].split(separator: ";").first,
            let equals = pair.firstIndex(of: "=")
        else { return nil }
        return String(pair[pair.index(after: equals)...])
    }

    /// The attributes of the only `Set-Cookie`, lowercased names mapped to values (`""` for flags).
    var cookieAttributes: [String: String] {
        guard setCookies.count == 1 else { return [:] }
        var attributes: [String: String] = [:]
        for part in setCookies[0].split(separator: ";").dropFirst() {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            let pieces = trimmed.split(separator: "=", maxSplits: 1)
            attributes[pieces[0].lowercased()] = pieces.count > 1 ? String(pieces[1]) : ""
        }
        return attributes
    }

    /// The headers every response must carry (RFC 6749 §5.1).
    var hasNoStoreJSONHeaders: Bool {
        response.headers["Cache-Control"] == "no-store" && response.headers["Pragma"] == "no-cache"
            && response.headers["Content-Type"] == "application/json"
    }
}
