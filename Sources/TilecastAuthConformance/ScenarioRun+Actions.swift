// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
import TilecastAuthTesting

extension ScenarioRun {
    /// Performs one action and returns its result document.
    func perform(
        _ kind: ScenarioAction.Kind,
        _ parameters: [String: ScenarioJSON]
    ) async throws(ScenarioFormatError)
        -> ScenarioJSON
    {
        let reader = ScenarioReader(parameters, path: kind.rawValue)
        switch kind {
        case .issueCode:
            return await issueCode(reader)
        case .insertCode:
            return try await insertCode(reader)
        case .request, .exchange, .refresh:
            let request = try endpointRequest(kind, reader)
            return document(for: await engine.handle(request: request))
        case .concurrent:
            return try await concurrent(reader)
        case .advanceClock:
            clock.advance(by: try reader.number("seconds") ?? 0)
            return .object([:])
        case .setClock:
            clock.set(Self.start.addingTimeInterval(try reader.number("seconds") ?? 0))
            return .object([:])
        case .revokeGrant:
            return try await revokeGrant(reader)
        case .revokeAllGrants:
            let account = AccountID(try reader.string("account") ?? Self.defaultAccount)
            return await backend {
                .object(["count": .number(Double(try await self.engine.revokeAllGrants(of: account).count))])
            }
        case .signOut:
            return try await signOut(reader)
        case .authenticateSession:
            if let header = try reader.string("cookieHeader") {
                return await backend {
                    Self.document(for: try await self.engine.authenticateSession(headers: ["Cookie": header]))
                }
            }
            let value = try reader.string("sessionId") ?? ""
            return await backend { Self.document(for: try await self.engine.authenticateSession(cookieValue: value)) }
        case .authenticateBearer:
            let accessToken = try reader.string("accessToken") ?? ""
            let header = try reader.string("authorization") ?? "Bearer \(accessToken)"
            return await backend { Self.document(for: try await self.engine.authenticateBearer(authorization: header)) }
        case .setAccount:
            accounts.setActive(try reader.bool("active") ?? true, AccountID(try reader.string("account") ?? ""))
            return .object([:])
        case .failNextSessionStart:
            faults.failNext(anyOf: [.redeemCode, .replaceSession])
            return .object([:])
        case .failNext:
            try failNext(reader)
            return .object([:])
        case .createGrant:
            return try await createGrant(reader)
        case .removeExpired:
            return await backend {
                .object(["removed": .number(Double(try await self.memory.removeExpired(at: self.clock.now())))])
            }
        }
    }

    // MARK: Codes

    private func issueCode(_ reader: ScenarioReader) async -> ScenarioJSON {
        do {
            let verifier = try reader.string("verifier") ?? CodeChallenge.makeVerifier(using: random)
            let challenge =
                reader.members["challenge"] == nil
                ? CodeChallenge.s256(for: verifier).value : try reader.string("challenge")
            let method = reader.members["challengeMethod"] == nil ? "S256" : try reader.string("challengeMethod")
            secrets.append(verifier)
            let issued = try await engine.issueCode(
                account: AccountID(try reader.string("account") ?? Self.defaultAccount),
                client: ClientID(try reader.string("client") ?? engine.configuration.servedClient.rawValue),
                redirectURI: try reader.string("redirectUri") ?? engine.configuration.callbackURI,
                codeChallenge: challenge,
                codeChallengeMethod: method,
                scope: try reader.string("scope") ?? Self.defaultScope
            )
            secrets.append(issued.code.unredactedValue)
            return .object([
                "code": .string(issued.code.unredactedValue),
                "verifier": .string(verifier),
                "challenge": challenge.map(ScenarioJSON.string) ?? .null,
            ])
        } catch let error as IssuanceError {
            return .object([
                "error": .string(error.oauthErrorCode.description), "mayRedirect": .bool(error.mayRedirect),
            ])
        } catch {
            return .object(["error": .string("\(error)")])
        }
    }

    private func insertCode(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let verifier = try reader.string("verifier") ?? CodeChallenge.makeVerifier(using: random)
        secrets.append(verifier)
        var challenge: CodeChallenge?
        if reader.members["challenge"] == nil {
            challenge = CodeChallenge.s256(for: verifier)
        } else if let value = try reader.string("challenge") {
            let method = reader.members["challengeMethod"] == nil ? "S256" : try reader.string("challengeMethod")
            challenge = method.map { CodeChallenge(method: CodeChallenge.Method(rawValue: $0), value: value) }
        }
        guard let scope = Scope(try reader.string("scope") ?? Self.defaultScope) else {
            throw ScenarioFormatError(path: "insertCode.scope", message: "is not a valid scope")
        }
        let code = OpaqueToken.mint(.authorizationCode, using: random)
        secrets.append(code.unredactedValue)
        let now = clock.now()
        let record = AuthorizationCode(
            digest: code.digest,
            client: ClientID(try reader.string("client") ?? engine.configuration.servedClient.rawValue),
            account: AccountID(try reader.string("account") ?? Self.defaultAccount),
            redirectURI: try reader.string("redirectUri") ?? engine.configuration.callbackURI,
            scope: scope,
            challenge: challenge,
            issuedAt: now,
            expiresAt: now.addingTimeInterval(try reader.number("lifetime") ?? 60)
        )
        return await backend {
            try await self.memory.insertCode(record)
            return .object(["code": .string(code.unredactedValue), "verifier": .string(verifier)])
        }
    }

    // MARK: Requests

    /// The endpoint request an action describes.
    func endpointRequest(
        _ kind: ScenarioAction.Kind,
        _ reader: ScenarioReader
    ) throws(ScenarioFormatError)
        -> EndpointRequest
    {
        var body: [UInt8] = []
        switch kind {
        case .request:
            if let text = try reader.string("body") {
                body = Array(text.utf8)
            } else if let encoded = try reader.string("bodyBase64") {
                guard let bytes = Data(base64Encoded: encoded) else {
                    throw ScenarioFormatError(path: "request.bodyBase64", message: "is not base64")
                }
                body = Array(bytes)
            } else if let json = reader.members["json"] {
                body = Array(json.description.utf8)
            }
        case .exchange, .refresh:
            var members: [String: ScenarioJSON] = [
                "client_id": .string(try reader.string("clientId") ?? engine.configuration.servedClient.rawValue)
            ]
            if kind == .exchange {
                members["grant_type"] = .string("authorization_code")
                members["code"] = reader.members["code"] ?? .null
                members["code_verifier"] = reader.members["verifier"] ?? .null
                members["redirect_uri"] = .string(try reader.string("redirectUri") ?? engine.configuration.callbackURI)
            } else {
                members["grant_type"] = .string("refresh_token")
                members["refresh_token"] = reader.members["refreshToken"] ?? .null
                if let studioSession = reader.members["studioSession"] {
                    members["studio_session"] = studioSession
                }
            }
            for (key, value) in try reader.object("extra") ?? [:] {
                members[key] = value
            }
            for key in try reader.strings("omit") ?? [] {
                members[key] = nil
            }
            body = Array(ScenarioJSON.object(members).description.utf8)
        default:
            throw ScenarioFormatError(path: kind.rawValue, message: "is not a request")
        }
        var headers = HeaderFields()
        if let given = try reader.object("headers") {
            for (name, value) in given.sorted(by: { $0.key < $1.key }) {
                for item in value.arrayValue ?? [value] {
                    headers.append(name: name, value: item.text)
                }
            }
        } else {
            headers.append(name: "Content-Type", value: "application/json")
        }
        let peer = reader.members["peer"] == nil ? Self.defaultPeer : try reader.string("peer")
        return EndpointRequest(
            method: try reader.string("method") ?? "POST",
            headers: headers,
            body: body,
            peerAddress: peer
        )
    }

    /// The result document of an endpoint response: `status`, `headers` (lowercased names), `body` (the
    /// JSON, or null), `cookie` (the first `Set-Cookie` parsed, or null) and `setCookieCount`.
    func document(for response: EndpointResponse) -> ScenarioJSON {
        var headers: [String: ScenarioJSON] = [:]
        for field in response.headers.fields {
            let name = field.name.lowercased()
            if let existing = headers[name] {
                headers[name] = .array((existing.arrayValue ?? [existing]) + [.string(field.value)])
            } else {
                headers[name] = .string(field.value)
            }
        }
        let body = ScenarioJSON(data: Data(response.body)) ?? .null
        for path in ["data.credential.access_token", "data.credential.refresh_token"] {
            if let secret = body.value(at: path)?.stringValue {
                secrets.append(secret)
            }
        }
        let setCookies = response.headers.values(for: "Set-Cookie")
        var cookie = ScenarioJSON.null
        if let first = setCookies.first {
            cookie = Self.parseSetCookie(first)
            if let value = cookie.value(at: "value")?.stringValue, !value.isEmpty {
                secrets.append(value)
            }
        }
        return .object([
            "status": .number(Double(response.status)),
            "headers": .object(headers),
            "body": body,
            "cookie": cookie,
            "setCookieCount": .number(Double(setCookies.count)),
        ])
    }

    /// `{"name", "value", "attributes": {lowercased name: value, or true for a flag}}`.
    static func parseSetCookie(_ header: String) -> ScenarioJSON {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let pair = parts[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        var attributes: [String: ScenarioJSON] = [:]
        for part in parts.dropFirst() where !part.isEmpty {
            let attribute = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            attributes[attribute[0].lowercased()] = attribute.count > 1 ? .string(String(attribute[1])) : .bool(true)
        }
        return .object([
            "name": .string(String(pair[0])),
            "value": .string(pair.count > 1 ? String(pair[1]) : ""),
            "attributes": .object(attributes),
        ])
    }

    private func concurrent(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let count = Int(try reader.number("count") ?? 0)
        guard count > 0 && count <= 1000 else {
            throw ScenarioFormatError(path: "concurrent.count", message: "must be 1 to 1000")
        }
        guard
            let innerKind = [ScenarioAction.Kind.request, .exchange, .refresh].first(where: {
                reader.members[$0.rawValue] != nil
            }),
            let inner = try reader.object(innerKind.rawValue)
        else {
            throw ScenarioFormatError(path: "concurrent", message: "needs one of request, exchange, refresh")
        }
        let request = try endpointRequest(innerKind, ScenarioReader(inner, path: "concurrent.\(innerKind.rawValue)"))
        let engine = self.engine
        let responses = await withTaskGroup(of: EndpointResponse.self) { group in
            for _ in 0..<count {
                group.addTask { await engine.handle(request: request) }
            }
            return await group.reduce(into: [EndpointResponse]()) { $0.append($1) }
        }
        var statuses: [String: ScenarioJSON] = [:]
        for response in responses {
            _ = document(for: response)  // records the secrets it carries
            statuses[String(response.status)] = .number((statuses[String(response.status)]?.numberValue ?? 0) + 1)
        }
        return .object(["statuses": .object(statuses), "count": .number(Double(count))])
    }

    // MARK: Lifecycle

    private func revokeGrant(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let grant: GrantID?
        do {
            if let value = try reader.string("refreshToken") {
                grant =
                    try await OpaqueToken(presented: value, as: .refreshToken).asyncMap {
                        try await self.memory.refreshToken($0.digest)?.grant.id
                    } ?? nil
            } else if let value = try reader.string("accessToken") {
                grant =
                    try await OpaqueToken(presented: value, as: .accessToken).asyncMap {
                        try await self.memory.accessToken($0.digest)?.grant.id
                    } ?? nil
            } else if let value = try reader.string("sessionId") {
                grant =
                    try await OpaqueToken(presented: value, as: .studioSession).asyncMap {
                        try await self.memory.session($0.digest)?.grant.id
                    } ?? nil
            } else {
                throw ScenarioFormatError(path: "revokeGrant", message: "needs refreshToken, accessToken or sessionId")
            }
        } catch let error as ScenarioFormatError {
            throw error
        } catch {
            return .object(["error": .string("\(error)")])
        }
        guard let grant else { return .object(["outcome": .string("notFound")]) }
        return await backend {
            switch try await self.engine.revokeGrant(grant) {
            case .revoked: .object(["outcome": .string("revoked")])
            case .alreadyRevoked: .object(["outcome": .string("alreadyRevoked")])
            case .notFound: .object(["outcome": .string("notFound")])
            }
        }
    }

    private func signOut(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let sessionID = try reader.string("sessionId")
        let cookieHeader = try reader.string("cookieHeader")
        let token = try reader.string("token")
        let client = ClientID(try reader.string("client") ?? engine.configuration.servedClient.rawValue)
        return await backend {
            let outcome: SignOutOutcome
            if let sessionID {
                outcome = try await self.engine.signOut(sessionCookieValue: sessionID)
            } else if let cookieHeader {
                outcome = try await self.engine.signOut(headers: ["Cookie": cookieHeader])
            } else {
                outcome = try await self.engine.signOut(token: token ?? "", client: client)
            }
            switch outcome {
            case .signedOut(let grant):
                return .object(["outcome": .string("signedOut"), "grant": .string(grant.description)])
            case .notSignedIn: return .object(["outcome": .string("notSignedIn")])
            }
        }
    }

    private func createGrant(_ reader: ScenarioReader) async throws(ScenarioFormatError) -> ScenarioJSON {
        let account = AccountID(try reader.string("account") ?? Self.defaultAccount)
        let client = ClientID(try reader.string("client") ?? "")
        let scope = try reader.string("scope") ?? "tiles:read"
        let session = try reader.bool("session") ?? false
        do {
            let issued = try await engine.createGrant(
                account: account,
                client: client,
                scope: scope,
                startsSession: session
            )
            let tokens = [
                issued.credential.accessToken.unredactedValue, issued.credential.refreshToken.unredactedValue,
            ]
            secrets += tokens
            var result: [String: ScenarioJSON] = [
                "grant": .string(issued.grant.description),
                "accessToken": .string(tokens[0]),
                "refreshToken": .string(tokens[1]),
            ]
            if let cookie = issued.cookie {
                let value = Self.parseSetCookie(cookie.headerValue).value(at: "value") ?? .null
                secrets.append(value.text)
                result["sessionId"] = value
            }
            return .object(result)
        } catch {
            return .object(["error": .string(error.oauthErrorCode.description)])
        }
    }

    private func failNext(_ reader: ScenarioReader) throws(ScenarioFormatError) {
        let name = try reader.string("operation") ?? ""
        switch name {
        case "accountDirectory": accounts.failNext()
        case "rateLimiter": limiter.failNext()
        default:
            guard let operation = FaultInjectingStore.Operation(rawValue: name) else {
                throw ScenarioFormatError(
                    path: "failNext.operation",
                    message: "must be one of \(ScenarioAction.Kind.failableOperations.joined(separator: ", "))"
                )
            }
            faults.failNext(operation)
        }
    }

    /// Runs a lifecycle call, turning a backend error into `{"error": …}`.
    private func backend(_ body: () async throws -> ScenarioJSON) async -> ScenarioJSON {
        do {
            return try await body()
        } catch {
            return .object(["error": .string("\(error)")])
        }
    }

    static func document(for authentication: Authentication) -> ScenarioJSON {
        switch authentication {
        case .authenticated(let who):
            .object([
                "authenticated": .bool(true),
                "account": .string(who.account.rawValue),
                "client": .string(who.client.rawValue),
                "scope": .string(who.scope.rawValue),
            ])
        case .unauthenticated(let failure):
            .object(["authenticated": .bool(false), "failure": .string("\(failure)")])
        }
    }
}

extension Optional {
    /// `map` with an asynchronous, throwing transform.
    fileprivate func asyncMap<Result>(_ transform: (Wrapped) async throws -> Result) async rethrows -> Result? {
        guard let wrapped = self else { return nil }
        return try await transform(wrapped)
    }
}
