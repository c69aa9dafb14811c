// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL
import Foundation
import TilecastAuth
import TilecastAuthPostgres

/// `tilecast-auth postgres-race`: several OS processes, each with its own engine, store and connection
/// pool, race on one database — the deployment the PostgreSQL store exists for. One code is exchanged by
/// all of them at once, then one refresh token is refreshed by all of them at once; exactly one of each
/// may succeed. Exits non-zero if not.
struct PostgresRaceCommand: Subcommand {
    private static let account: AccountID = "race-account"
    private static let callback = "tilecast-ios://oauth/callback"
    private static let clients = [
        Client(id: .tilecastIOS, redirectURIs: [callback], allowedScopeTokens: ["profile"])
    ]

    private var databaseURL = ""
    private var processes = 4
    private var requests = 48
    /// Set in a child: the schema, the request body and the moment to start at.
    private var child: (schema: String, body: String, start: Double)?

    init(arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        var schema: String?
        var body: String?
        var start: Double?
        while let argument = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw UsageError("\(argument) needs a value") }
            switch argument {
            case "--database-url": databaseURL = value
            case "--processes":
                guard let count = Int(value), count >= 2 else { throw UsageError("--processes needs 2 or more") }
                processes = count
            case "--requests":
                guard let count = Int(value), count >= 2 else { throw UsageError("--requests needs 2 or more") }
                requests = count
            case "--child-schema": schema = value
            case "--child-body": body = value
            case "--child-start": start = Double(value)
            default: throw UsageError("unknown option \(argument)")
            }
        }
        guard !databaseURL.isEmpty else { throw UsageError("--database-url is required") }
        if let schema, let body, let start {
            child = (schema, body, start)
        }
    }

    func run() async -> Bool {
        do {
            if let child {
                try await runChild(schema: child.schema, body: child.body, start: child.start)
                return true
            }
            return try await runRace()
        } catch {
            print("postgres-race failed: \(error)")
            return false
        }
    }

    // MARK: The parent

    private func runRace() async throws -> Bool {
        let schema = "tilecast_race_" + UUID().uuidString.lowercased().prefix(8)
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(databaseURL: databaseURL, schema: schema)
        )
        try await store.migrate()
        // The throwaway schema goes on every path: a failed child, an error, a violation.
        let outcome: Result<Bool, any Error>
        do {
            outcome = .success(try await runRaces(store: store, schema: schema))
        } catch {
            outcome = .failure(error)
        }
        do {
            try await store.dropSchema()
        } catch {
            print("postgres-race: could not drop the schema \(schema): \(error)")
        }
        store.close()
        return try outcome.get()
    }

    /// The two races on `store`.
    private func runRaces(store: PostgresGrantStore, schema: String) async throws -> Bool {
        let engine = try Self.engine(on: store)

        let (code, verifier) = try await Self.issueCode(engine)
        let exchange = Self.body([
            "grant_type": "authorization_code", "client_id": "tilecast-ios", "code": code,
            "redirect_uri": Self.callback, "code_verifier": verifier,
        ])
        let exchangeStatuses = try race(schema: schema, body: exchange)
        let exchangeOK = exchangeStatuses.filter { $0 == 200 }.count == 1 && !exchangeStatuses.contains(500)
        print(
            "\(exchangeOK ? "ok  " : "FAIL") one code exchanged by \(processes) processes at once: "
                + Self.summary(exchangeStatuses)
        )

        let (secondCode, secondVerifier) = try await Self.issueCode(engine)
        let signIn = await engine.handle(
            request: Self.request(
                Self.body([
                    "grant_type": "authorization_code", "client_id": "tilecast-ios", "code": secondCode,
                    "redirect_uri": Self.callback, "code_verifier": secondVerifier,
                ])
            )
        )
        guard let refreshToken = Self.member("refresh_token", of: signIn) else {
            print("FAIL the sign-in for the refresh race answered \(signIn.status)")
            return false
        }
        let refresh = Self.body([
            "grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": refreshToken,
        ])
        let refreshStatuses = try race(schema: schema, body: refresh)
        let refreshOK = refreshStatuses.filter { $0 == 200 }.count == 1 && !refreshStatuses.contains(500)
        print(
            "\(refreshOK ? "ok  " : "FAIL") one refresh token refreshed by \(processes) processes at once: "
                + Self.summary(refreshStatuses)
        )
        print(
            "postgres-race: \(processes) processes, \(requests) requests per race, \(exchangeOK && refreshOK ? "no violations" : "VIOLATIONS")"
        )
        return exchangeOK && refreshOK
    }

    /// Starts the children together and returns every status they saw.
    private func race(schema: String, body: String) throws -> [Int] {
        let start = Date().timeIntervalSince1970 + 2
        let share = (requests + processes - 1) / processes
        var children: [(Process, Pipe)] = []
        for _ in 0..<processes {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
            process.arguments = [
                "postgres-race", "--database-url", databaseURL, "--requests", String(share), "--child-schema", schema,
                "--child-body", body, "--child-start", String(start),
            ]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            children.append((process, pipe))
        }
        var statuses: [Int] = []
        var failure: RaceFailure?
        for (process, pipe) in children {
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0,
                let line = output.split(separator: "\n").first(where: { $0.hasPrefix("statuses") })
            else {
                // Stop the others: the race is void, and the schema is about to go.
                for (other, _) in children where other.isRunning {
                    other.terminate()
                }
                failure = failure ?? RaceFailure(output: output)
                continue
            }
            statuses += line.split(separator: " ").dropFirst().compactMap { Int($0) }
        }
        if let failure {
            throw failure
        }
        return statuses
    }

    // MARK: A child

    private func runChild(schema: String, body: String, start: Double) async throws {
        let store = PostgresGrantStore(
            clients: Self.clients,
            configuration: try PostgresConfiguration(
                databaseURL: databaseURL,
                schema: schema,
                maximumConnections: Self.connectionsPerChild
            )
        )
        defer { store.close() }
        let engine = try Self.engine(on: store)
        // One connection before the start, so the race is between requests, not a first connect; the
        // pool opens the others as the requests need them, at most a few per process.
        _ = try await store.grant(GrantID(rawValue: UUID()))
        let wait = start - Date().timeIntervalSince1970
        if wait > 0 {
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
        let request = Self.request(body)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<requests {
                group.addTask { await engine.handle(request: request).status }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        print("statuses " + statuses.map(String.init).joined(separator: " "))
    }

    /// The pool of each child: enough for its requests to race, few enough that many processes fit a
    /// server with the default `max_connections`.
    static let connectionsPerChild = 4

    // MARK: Helpers

    private static func engine(on store: PostgresGrantStore) throws -> AuthEngine {
        try AuthEngine(
            store: store,
            accounts: InMemoryAccountDirectory(activeAccounts: [account]),
            rateLimiter: InMemoryRateLimiter(capacity: 100_000)
        )
    }

    private static func issueCode(_ engine: AuthEngine) async throws -> (code: String, verifier: String) {
        let verifier = CodeChallenge.makeVerifier(using: SystemRandomSource())
        let issued = try await engine.issueCode(
            account: account,
            client: .tilecastIOS,
            redirectURI: callback,
            codeChallenge: CodeChallenge.s256(for: verifier).value,
            codeChallengeMethod: "S256",
            scope: "profile"
        )
        return (issued.code.unredactedValue, verifier)
    }

    private static func body(_ members: [String: String]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: members, options: [.sortedKeys]), as: UTF8.self)
    }

    private static func request(_ body: String) -> EndpointRequest {
        EndpointRequest(
            method: "POST",
            headers: ["Content-Type": "application/json"],
            body: Array(body.utf8),
            peerAddress: "192.0.2.80"
        )
    }

    private static func member(_ name: String, of response: EndpointResponse) -> String? {
        let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let credential = (json?["data"] as? [String: Any])?["credential"] as? [String: Any]
        return credential?[name] as? String
    }

    private static func summary(_ statuses: [Int]) -> String {
        Dictionary(grouping: statuses, by: { $0 }).keys.sorted().map { status in
            "\(statuses.filter { $0 == status }.count)× \(status)"
        }.joined(separator: ", ")
    }
}
#else
/// `tilecast-auth postgres-race` in a build without the package trait PostgreSQL: it says how to get one.
struct PostgresRaceCommand: Subcommand {
    init(arguments: [String]) throws(UsageError) {
        throw PostgreSQLSupport.unavailable("postgres-race")
    }

    func run() async -> Bool { false }
}
#endif

extension PostgresRaceCommand {
    static let usage = """
        usage: tilecast-auth postgres-race --database-url URL [--processes N] [--requests N]

          --database-url URL  the PostgreSQL server (a libpq connection string or URI); the race runs in
                              a throwaway schema, dropped afterwards
          --processes N       processes racing (default 4)
          --requests N        requests in all, spread over the processes (default 48)

        Needs the package trait PostgreSQL: swift run --traits PostgreSQL tilecast-auth postgres-race …
        """
}
