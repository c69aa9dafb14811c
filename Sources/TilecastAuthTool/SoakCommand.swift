// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuthVerification

#if PostgreSQL
import TilecastAuthPostgres
#endif

/// `tilecast-auth soak --seconds N [--first-seed S] [--length L] [--database-url URL]`: model-based
/// randomized testing for as long as it is given — as many seeded sequences as fit, each against fresh
/// engines and the reference model, in memory or on PostgreSQL. A failure prints its seed and the
/// shortest failing sequence found.
struct SoakCommand: Subcommand {
    static let usage = """
        usage: tilecast-auth soak [--seconds N] [--first-seed S] [--length L] [--database-url URL]

          --seconds       how long to run (default 10)
          --first-seed    the first sequence's seed; each next sequence takes the next seed (default 1)
          --length        operations per sequence (default 60)
          --database-url  run every sequence on two PostgresGrantStore instances, each remembering what
                          it wrote, on a fresh schema of this database, dropped after the sequence (needs
                          the package trait PostgreSQL)

        Every fourth seed runs with a 10-second refresh-token reuse leeway, the others with strict rotation.
        In memory, seeds 0–3, 8–11, … run one instance reading every record; seeds 4–7, 12–15, … run two
        instances on one store, each remembering what it wrote (GrantStore's "Remembered records").
        """

    var seconds = 10.0
    var firstSeed: UInt64 = 1
    var length = 60
    /// The database whose fresh schemas the sequences run on; in memory without one.
    var databaseURL: String?

    init(arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw UsageError("\(argument) needs a value") }
            switch argument {
            case "--seconds":
                guard let seconds = Double(value), seconds > 0 else {
                    throw UsageError("--seconds needs a positive number")
                }
                self.seconds = seconds
            case "--first-seed":
                guard let seed = UInt64(value) else { throw UsageError("--first-seed needs a whole number") }
                firstSeed = seed
            case "--length":
                guard let length = Int(value), length > 0 else {
                    throw UsageError("--length needs a positive whole number")
                }
                self.length = length
            case "--database-url":
                #if PostgreSQL
                databaseURL = value
                #else
                throw UsageError("--database-url needs the package trait PostgreSQL")
                #endif
            default:
                throw UsageError("unknown option \(argument)")
            }
        }
    }

    /// The reuse leeway a seed runs with.
    static func leeway(forSeed seed: UInt64) -> Double {
        seed % 4 == 0 ? 10 : 0
    }

    /// The deployment a seed runs on: on PostgreSQL, two instances; in memory, in blocks of four seeds,
    /// so that both leeways meet both, one reading instance or two remembering ones.
    func deployment(forSeed seed: UInt64) -> ModelChecker.Deployment {
        #if PostgreSQL
        if let databaseURL { return Self.twoPostgresInstances(databaseURL) }
        #endif
        return (seed / 4) % 2 == 0 ? .single : .remembering(instances: 2)
    }

    #if PostgreSQL
    /// Two instances on a fresh schema of the database at `url`, named `tilecast_soak_…`
    /// (`ModelChecker.Deployment.twoPostgresInstances(configuration:)`).
    static func twoPostgresInstances(_ url: String) -> ModelChecker.Deployment {
        .twoPostgresInstances {
            let schema = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            return try PostgresConfiguration(databaseURL: url, schema: "tilecast_soak_\(schema)", maximumConnections: 4)
        }
    }
    #endif

    mutating func run() async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var seed = firstSeed
        var sequences = 0
        var statistics = ModelStatistics()
        while Date() < deadline {
            let leeway = Self.leeway(forSeed: seed)
            let deployment = deployment(forSeed: seed)
            let checker = ModelChecker(leeway: leeway, deployment: deployment)
            let sequence = OperationGenerator().sequence(seed: seed, length: length)
            let (violation, counted) = await checker.runCounting(sequence)
            statistics += counted
            sequences += 1
            if let violation {
                print("VIOLATION at seed \(seed) (leeway \(leeway) s, \(deployment)): \(violation)")
                let shortest = await checker.shrink(sequence)
                print("shortest failing sequence (\(shortest.count) operations):")
                for operation in shortest {
                    print("  \(operation)")
                }
                // The URL may hold a password: named, not printed.
                let database = databaseURL == nil ? "" : " --database-url URL"
                print("reproduce: tilecast-auth soak --first-seed \(seed) --seconds 1 --length \(length)\(database)")
                return false
            }
            seed += 1
        }
        let statuses = statistics.statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(
            separator: ", "
        )
        print(
            "soak: \(sequences) sequences (seeds \(firstSeed)–\(seed - 1)), \(statistics.operations) operations, \(statistics.requests) requests (\(statuses)), \(statistics.authenticationChecks) authentication checks, \(statistics.revocations) grants revoked, \(statistics.rememberedRecordsUsed) lookups answered from remembered records (\(statistics.rememberedRecordsFoundStale) found stale by a write), \(statistics.concurrentRetriesWithinLeeway) concurrent retries within a leeway (\(statistics.rotationsSupersededInBursts) rotations superseded in them), 0 violations"
        )
        print(
            "soak-result sequences=\(sequences) operations=\(statistics.operations) requests=\(statistics.requests) violations=0"
        )
        return true
    }
}
