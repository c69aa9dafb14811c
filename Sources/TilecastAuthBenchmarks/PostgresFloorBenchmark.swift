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

    /// Two round trips and one durable write, µs.
    public var floor: Double { 2 * roundTrip + durableWrite }

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
}
#endif
