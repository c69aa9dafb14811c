// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

/// The parts of an endpoint response the model compares.
struct ObservedResponse {
    let status: Int
    let error: String?
    let authenticated: Bool?
    let accessToken: String?
    let refreshToken: String?
    let setCookieCount: Int
    let sessionID: String?

    init(_ response: EndpointResponse) {
        status = response.status
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        error = json["error"] as? String
        let data = json["data"] as? [String: Any]
        authenticated = data?["authenticated"] as? Bool
        let credential = data?["credential"] as? [String: Any]
        accessToken = credential?["access_token"] as? String
        refreshToken = credential?["refresh_token"] as? String
        let cookies = response.headers.values(for: "Set-Cookie")
        setCookieCount = cookies.count
        sessionID = cookies.first.flatMap { header in
            header.split(separator: ";").first.flatMap { pair in
                pair.firstIndex(of: "=").map { String(pair[pair.index(after: $0)...]) }
            }
        }
    }

    /// How this response differs from the model's answer; `nil` when it agrees.
    func mismatch(with answer: ReferenceModel.Answer) -> String? {
        var differences: [String] = []
        if status != answer.status { differences.append("status \(status)") }
        if status != 200, error != answer.error { differences.append("error \(error ?? "none")") }
        if status == 200 && answer.status == 200 {
            let expectCookie = answer.authenticated == true
            if authenticated != expectCookie {
                differences.append("authenticated \(authenticated.map(String.init) ?? "absent")")
            }
            if setCookieCount != (expectCookie ? 1 : 0) { differences.append("\(setCookieCount) Set-Cookie") }
        } else if setCookieCount != 0 {
            differences.append("\(setCookieCount) Set-Cookie on a refusal")
        }
        guard !differences.isEmpty else { return nil }
        return "expected \(answer), got " + differences.joined(separator: ", ")
    }
}
