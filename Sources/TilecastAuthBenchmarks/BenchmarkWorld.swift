// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuth

#if PostgreSQL
import TilecastAuthPostgres
#endif

/// An engine on a store holding a given number of live grants, with the system clock and the operating
/// system's random source — the production configuration — and pools of codes, refresh tokens, session
/// cookies and access tokens for the measured operations to use once each.
final class BenchmarkWorld {
    static let callback = "tilecast-ios://oauth/callback"
    static let account: AccountID = "bench-account"
    static let scope = "tiles:read profile"
    static let clients = [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["tiles:read", "profile"])
    ]

    let engine: AuthEngine
    /// How the world's codes name their account, redirect URI and scope.
    let strings: RequestStrings
    #if PostgreSQL
    private let postgres: (store: PostgresGrantStore, limiter: PostgresRateLimiter)?
    #endif

    /// A world with `liveGrants` live grants. An in-memory store is sized for `liveGrants + headroom`, the
    /// way a server sizes its store for the load it expects
    /// (``InMemoryGrantStore/init(clients:expectedLiveGrants:)``); a PostgreSQL one gets a fresh schema.
    init(
        liveGrants: Int,
        headroom: Int = 0,
        store: BenchmarkStore = .memory,
        strings: RequestStrings = .shared
    ) async throws {
        self.strings = strings
        let accounts: any AccountDirectory =
            switch strings {
            case .shared: InMemoryAccountDirectory(activeAccounts: [Self.account])
            case .asReceived: EveryAccountActive()
            }
        switch store {
        case .memory:
            engine = try AuthEngine(
                store: InMemoryGrantStore(clients: Self.clients, expectedLiveGrants: liveGrants + headroom),
                accounts: accounts,
                rateLimiter: InMemoryRateLimiter(capacity: Int.max / 2)
            )
            #if PostgreSQL
            postgres = nil
            #endif
        #if PostgreSQL
        case .postgres(let databaseURL, let rememberedRecords, let leaseSize):
            let schema = "tilecast_bench_" + UUID().uuidString.lowercased().prefix(8)
            let configuration = try PostgresConfiguration(
                databaseURL: databaseURL,
                schema: schema,
                maximumConnections: 8,
                rememberedRecords: rememberedRecords
            )
            let store = PostgresGrantStore(clients: Self.clients, configuration: configuration)
            try await store.migrate()
            let limiter = PostgresRateLimiter(
                configuration: configuration,
                capacity: Int(Int32.max),
                leaseSize: leaseSize
            )
            engine = try AuthEngine(
                store: store,
                accounts: accounts,
                rateLimiter: limiter
            )
            postgres = (store, limiter)
        #endif
        }
        try await populate(liveGrants)
        #if PostgreSQL
        // A store in service has statistics — autovacuum analyzes a table once a tenth of it changed —
        // and a fresh schema has none.
        try await postgres?.store.analyze()
        #endif
    }

    /// The executor the timed operations run on: on PostgreSQL the store's, as a server runs them
    /// (``PostgresGrantStore/taskExecutor``); in memory none, so they run on the calling task.
    var taskExecutor: (any TaskExecutor)? {
        #if PostgreSQL
        postgres?.store.taskExecutor
        #else
        nil
        #endif
    }

    /// Round trips to PostgreSQL so far, store and limiter together; `nil` in memory.
    var roundTrips: Int? {
        #if PostgreSQL
        postgres.map { $0.store.statistics.roundTrips + $0.limiter.statistics.roundTrips }
        #else
        nil
        #endif
    }

    /// Codes and refresh tokens the store answered from what it remembers of its own writes so far;
    /// `nil` in memory.
    var rememberedRecordsUsed: Int? {
        #if PostgreSQL
        postgres.map { $0.store.statistics.rememberedRecordsUsed }
        #else
        nil
        #endif
    }

    /// Statements the server has executed in this database, nested ones included, when it tracks them
    /// (`pg_stat_statements` with `track = all`); `nil` otherwise.
    func serverStatements() async -> Int? {
        #if PostgreSQL
        guard let postgres else { return nil }
        return try? await postgres.store.serverStatementCount()
        #else
        nil
        #endif
    }

    /// Drops a PostgreSQL world's schema and closes its connections.
    func tearDown() async {
        #if PostgreSQL
        guard let postgres else { return }
        postgres.limiter.close()
        try? await postgres.store.dropSchema()
        postgres.store.close()
        #endif
    }

    /// Adds `count` live grants the way code exchanges leave them: a redeemed code, the grant, an access
    /// token, a refresh token and a session each.
    func populate(_ count: Int) async throws {
        var remaining = count
        while remaining > 0 {
            let batch = min(remaining, 10_000)
            let codes = try await issueCodes(batch)
            for (code, verifier) in codes {
                _ = await engine.handle(request: Self.exchange(code: code, verifier: verifier))
            }
            remaining -= batch
        }
    }

    /// Fresh codes and their verifiers.
    func issueCodes(_ count: Int) async throws -> [(code: String, verifier: String)] {
        var codes: [(String, String)] = []
        codes.reserveCapacity(count)
        let random = SystemRandomSource()
        for _ in 0..<count {
            let verifier = CodeChallenge.makeVerifier(using: random)
            let (account, redirectURI, scope) = requestStrings()
            let issued = try await engine.issueCode(
                account: account,
                client: .tilecastIOS,
                redirectURI: redirectURI,
                codeChallenge: CodeChallenge.s256(for: verifier).value,
                codeChallengeMethod: "S256",
                scope: scope
            )
            codes.append((issued.code.unredactedValue, verifier))
        }
        return codes
    }

    /// The account, redirect URI and scope of the next code, as ``strings`` says.
    private func requestStrings() -> (account: AccountID, redirectURI: String, scope: String) {
        switch strings {
        case .shared:
            return (Self.account, Self.callback, Self.scope)
        case .asReceived:
            // Each decoded from bytes, as a server's parser makes them: storage of their own.
            return (
                AccountID(UUID().uuidString.lowercased()),
                String(decoding: Array(Self.callback.utf8), as: UTF8.self),
                String(decoding: Array(Self.scope.utf8), as: UTF8.self)
            )
        }
    }

    /// Signs in `count` times; returns what each sign-in gave: refresh token, session id, access token.
    func signIns(_ count: Int) async throws -> [(refreshToken: String, session: String, accessToken: String)] {
        var results: [(String, String, String)] = []
        results.reserveCapacity(count)
        for (code, verifier) in try await issueCodes(count) {
            let response = await engine.handle(request: Self.exchange(code: code, verifier: verifier))
            results.append(
                (
                    Self.member("refresh_token", of: response), Self.sessionID(of: response),
                    Self.member("access_token", of: response)
                )
            )
        }
        return results
    }

    // MARK: Requests

    static func exchange(code: String, verifier: String) -> EndpointRequest {
        post(
            #"{"grant_type":"authorization_code","client_id":"tilecast-ios","code":"\#(code)","redirect_uri":"\#(callback)","code_verifier":"\#(verifier)"}"#
        )
    }

    static func refresh(_ token: String, studioSession: Bool) -> EndpointRequest {
        post(
            studioSession
                ? #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"\#(token)","studio_session":true}"#
                : #"{"grant_type":"refresh_token","client_id":"tilecast-ios","refresh_token":"\#(token)"}"#
        )
    }

    static func post(_ body: String) -> EndpointRequest {
        EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json", "User-Agent": "Tilecast/3.2 (iPhone; iOS 18.1)"],
            body: Array(body.utf8),
            peerAddress: "192.0.2.44"
        )
    }

    static func member(_ name: String, of response: EndpointResponse) -> String {
        let body = String(decoding: response.body, as: UTF8.self)
        guard let range = body.firstRange(of: "\"\(name)\":\"") else { return "" }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    static func sessionID(of response: EndpointResponse) -> String {
        guard let header = response.headers["Set-Cookie"], let pair = header.split(separator: ";").first,
            let equals = pair.firstIndex(of: "=")
        else { return "" }
        return String(pair[pair.index(after: equals)...])
    }
}

/// How a ``BenchmarkWorld``'s codes name their account, redirect URI and scope.
public enum RequestStrings: String, Sendable, CaseIterable {
    /// One short account name (kept inside its `String`, 15 bytes or less) and the same redirect URI and
    /// scope strings for every code: their bytes are stored once, however many records hold them.
    case shared = "shared"
    /// As a server receives them: every code for an account of its own, named by a 36-character id, and
    /// the redirect URI and the scope decoded afresh from each request's bytes — each string longer than
    /// 15 bytes, so each has storage of its own unless the store shares it.
    case asReceived = "as-received"
}

/// An account directory that finds every account active, for a world whose accounts are made as it goes.
private struct EveryAccountActive: AccountDirectory {
    func status(of account: AccountID) async throws -> AccountStatus { .active }
}
