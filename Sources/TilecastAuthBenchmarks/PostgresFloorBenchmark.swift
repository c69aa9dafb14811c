// SPDX-License-Identifier: Apache-2.0

import Foundation

#if PostgreSQL
import TilecastAuthPostgres
#endif

/// The least a code exchange or a refresh can cost on a PostgreSQL server, measured on that server.
///
/// Each is three round trips — the rate limiter's admission, which comes before the body is read (T-2);
/// the lookup of the code or token, which the engine's checks need before anything is consumed; the
/// atomic write after them — and the write's commit waits for the server's WAL flush, so that a redeemed
/// code or a rotated token survives a crash. The floor is two `SELECT 1`s and one durable one-row insert:
/// what those round trips and that commit cost with nothing else in them. It moves with the machine
/// (the wake-up latency of a virtual machine, the disk's flush), which is why the benchmark measures it
/// between its rounds and prints the operations as multiples of it.
public struct PostgresFloor: Sendable {
    /// One round trip of `SELECT 1`, µs (median).
    public let roundTrip: Double
    /// One round trip of a one-row insert committed durably, µs (median).
    public let durableWrite: Double

    /// Two round trips and one durable write, µs: the limiter's admission, the lookup and the write.
    public var floor: Double { floor(lookingUp: true) }

    /// The least an exchange or a refresh costs, µs: the limiter's admission, the lookup unless the
    /// store remembers the record (`lookingUp` false), and one durable write.
    public func floor(lookingUp: Bool) -> Double {
        (lookingUp ? 2 : 1) * roundTrip + durableWrite
    }

    public init(roundTrip: Double, durableWrite: Double) {
        self.roundTrip = roundTrip
        self.durableWrite = durableWrite
    }

    /// The median of each figure over several measurements.
    public static func median(of floors: [PostgresFloor]) -> PostgresFloor? {
        guard !floors.isEmpty else { return nil }
        return PostgresFloor(
            roundTrip: BenchmarkMeasurement.median(of: floors.map(\.roundTrip)),
            durableWrite: BenchmarkMeasurement.median(of: floors.map(\.durableWrite))
        )
    }
}

/// Whether the server a PostgreSQL run measured makes a commit wait for its WAL flush, as PostgreSQL does
/// as it comes, and its version: a run's figures mean something else on a server that does not flush
/// (`fsync = off`, which PostgreSQL's documentation says risks "unrecoverable data corruption" in a
/// crash, or `synchronous_commit = off`, which can lose the last transactions), so every run states it.
public struct PostgresServerDurability: Sendable, Equatable {
    /// The settings as `pg_settings` names them: `server_version`, `fsync`, `synchronous_commit`,
    /// `wal_sync_method`, those the server has.
    public let settings: [Setting]

    public struct Setting: Sendable, Equatable {
        public let name: String
        public let value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(settings: [Setting]) {
        self.settings = settings
    }

    /// The value of setting `name`, if the server reported it.
    public func value(of name: String) -> String? {
        settings.first { $0.name == name }?.value
    }

    /// Whether a commit waits until its WAL is on the disk: `fsync` on and `synchronous_commit` not off
    /// (`local`, `remote_write`, `on` and `remote_apply` all flush locally first).
    public var flushesCommits: Bool {
        value(of: "fsync") == "on" && value(of: "synchronous_commit") != "off"
    }

    /// `bench postgres_server version=… fsync=… synchronous_commit=… wal_sync_method=… durable_commits=yes|no`,
    /// each value up to its first space (a packaged server's version goes on: `15.18 (Debian 15.18-0+deb12u1)`).
    public var outputLine: String {
        let names = ["server_version": "version"]
        func word(_ value: String) -> String { String(value.prefix { $0 != " " }) }
        return "bench postgres_server "
            + settings.map { "\(names[$0.name] ?? $0.name)=\(word($0.value))" }.joined(separator: " ")
            + " durable_commits=\(flushesCommits ? "yes" : "no")"
    }
}

#if PostgreSQL
/// Measures ``PostgresFloor`` on a server.
public enum PostgresFloorBenchmark: Sendable {
    /// Measures `samples` of each on one connection of a store in a throwaway schema, on the store's task
    /// executor as the benchmark's callers run, and drops the schema.
    public static func run(databaseURL: String, samples: Int = 200) async throws -> PostgresFloor {
        let configuration = try PostgresConfiguration(
            databaseURL: databaseURL,
            schema: "tilecast_bench_floor_" + UUID().uuidString.lowercased().prefix(8),
            maximumConnections: 1
        )
        let store = PostgresGrantStore(clients: [], configuration: configuration)
        defer { store.close() }
        try await store.migrate()
        let floor: PostgresFloor
        do {
            floor = try await withTaskExecutorPreference(store.taskExecutor) {
                let measured = try await store.roundTripCosts(samples: samples)
                return PostgresFloor(roundTrip: measured.roundTrip, durableWrite: measured.durableWrite)
            }
        } catch {
            try? await store.dropSchema()
            throw error
        }
        try await store.dropSchema()
        return floor
    }

    /// The server's version and durability settings (``PostgresServerDurability``). Reads `pg_settings`
    /// only: no schema is made.
    public static func durability(databaseURL: String) async throws -> PostgresServerDurability {
        let configuration = try PostgresConfiguration(
            databaseURL: databaseURL,
            schema: "tilecast_bench_settings",
            maximumConnections: 1
        )
        let store = PostgresGrantStore(clients: [], configuration: configuration)
        defer { store.close() }
        let settings = try await store.durabilitySettings()
        return PostgresServerDurability(settings: settings.map { .init(name: $0.name, value: $0.value) })
    }
}
#endif
