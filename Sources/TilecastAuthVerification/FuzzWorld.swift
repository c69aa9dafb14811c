// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth
@_spi(Testing) import TilecastAuthTesting

/// The state every fuzz input starts from: an engine on an in-memory store seeded with live and used
/// codes, a grant with a current and a rotated refresh token, an access token and a session, and a web
/// client's grant — so that mutated inputs reach the deep paths (redemption, replay, rotation, reuse),
/// not only the parser.
///
/// The state is prepared once; each input gets a fresh store restored from its snapshot and a fresh
/// engine, so no input sees another's changes.
struct FuzzWorld: Sendable {
    /// The prepared records.
    let snapshot: InMemoryGrantStore.Snapshot
    /// Placeholder → live value, substituted into fuzz inputs.
    let placeholders: [(name: String, value: String)]

    static let callback = "tilecast-ios://oauth/callback"
    static let clients = [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["tiles:read"]),
        Client(
            id: "tilecast-web",
            redirectURIs: ["https://studio.tilecast.test/oauth/callback"],
            allowedScopeTokens: ["tiles:read"]
        ),
    ]
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// How an input varies the world it runs in.
    struct Options: Sendable {
        /// A 10-second refresh-token reuse leeway instead of strict rotation.
        var leeway = false
        /// A server released before native API access.
        var withoutNativeCredential = false
        /// The next Studio session start fails.
        var sessionStartFails = false
        /// The account is inactive.
        var accountInactive = false
        /// The clock has moved 61 seconds on: the live code has expired.
        var later = false
    }

    /// A fresh store with the prepared records, and an engine on it.
    func instantiate(_ options: Options) throws -> (InMemoryGrantStore, AuthEngine) {
        let memory = InMemoryGrantStore(clients: Self.clients, snapshot: snapshot)
        let faults = FaultInjectingStore(memory)
        if options.sessionStartFails {
            faults.failNext(anyOf: [.redeemCode, .replaceSession])
        }
        let accounts = InMemoryAccountDirectory(activeAccounts: ["fuzz"])
        if options.accountInactive {
            accounts.setStatus(.inactive, of: "fuzz")
        }
        let engine = try AuthEngine(
            configuration: EngineConfiguration(
                refreshTokenReuseLeeway: options.leeway ? .seconds(10) : .zero,
                issuesNativeCredential: !options.withoutNativeCredential
            ),
            store: faults,
            accounts: accounts,
            rateLimiter: InMemoryRateLimiter(capacity: 1_000_000),
            timeSource: ManualTimeSource(Self.start.addingTimeInterval(options.later ? 61 : 0)),
            randomSource: SeededRandomSource(seed: 0x5EC0)
        )
        return (memory, engine)
    }

    private static func engine(on store: InMemoryGrantStore, seed: UInt64) throws -> AuthEngine {
        try AuthEngine(
            store: store,
            accounts: InMemoryAccountDirectory(activeAccounts: ["fuzz"]),
            rateLimiter: InMemoryRateLimiter(capacity: 1_000_000),
            timeSource: ManualTimeSource(start),
            randomSource: SeededRandomSource(seed: seed)
        )
    }

    init() async throws {
        let memory = InMemoryGrantStore(clients: Self.clients)
        let random = SeededRandomSource(seed: 0xF022)
        let engine = try Self.engine(on: memory, seed: 0xF023)
        let live = try await engine.issueTestCode(account: "fuzz", using: random)
        let used = try await engine.issueTestCode(account: "fuzz", using: random)
        let signIn = await engine.handle(
            request: FuzzInput.request(
                body:
                    #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"\#(used.code)","redirect_uri":"\#(Self.callback)","code_verifier":"\#(used.verifier)"}"#
            )
        )
        let first = try FuzzWorld.member("refresh_token", of: signIn)
        let refreshed = await engine.handle(
            request: FuzzInput.request(
                body:
                    #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"\#(first)","studio_session":true}"#
            )
        )
        let web = try await engine.createGrant(
            account: "fuzz",
            client: "tilecast-web",
            scope: "tiles:read",
            startsSession: false
        )
        self.snapshot = memory.snapshot()
        self.placeholders = [
            ("$USED_VERIFIER", used.verifier), ("$USED_CODE", used.code),
            ("$VERIFIER", live.verifier), ("$CODE", live.code),
            ("$OLD_RT", first), ("$RT", try FuzzWorld.member("refresh_token", of: refreshed)),
            ("$AT", try FuzzWorld.member("access_token", of: refreshed)),
            ("$SESSION", try FuzzWorld.sessionID(of: refreshed)),
            ("$WEB_RT", web.credential.refreshToken.unredactedValue),
            ("$CALLBACK", Self.callback),
        ]
    }

    private struct SetupFailure: Error {}

    private static func member(_ name: String, of response: EndpointResponse) throws -> String {
        let body = String(decoding: response.body, as: UTF8.self)
        guard let range = body.firstRange(of: "\"\(name)\":\"") else { throw SetupFailure() }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    private static func sessionID(of response: EndpointResponse) throws -> String {
        guard let header = response.headers["Set-Cookie"], let pair = header.split(separator: ";").first,
            let equals = pair.firstIndex(of: "=")
        else { throw SetupFailure() }
        return String(pair[pair.index(after: equals)...])
    }
}
