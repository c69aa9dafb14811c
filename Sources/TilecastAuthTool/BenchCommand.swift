// SPDX-License-Identifier: Apache-2.0

import Foundation
import TilecastAuthBenchmarks

/// `tilecast-auth bench`: the engine's operations through its public API, with the in-memory store, as
/// medians and spreads of µs/op over several runs — beside SHA-256 against OpenSSL and, with `--peers`,
/// the peer libraries measured in the same run.
struct BenchCommand: Subcommand {
    static let usage = """
        usage: swift run -c release tilecast-auth bench [--smoke] [--runs N] [--ops N] [--grants N,N…]
                                                        [--memory-grants N] [--peers PATH]
                                                        [--store memory|postgres --database-url URL]
                                                        [--strings shared|as-received]

          --smoke           a few hundred operations, to show the benchmark still works (CI)
          --runs N          runs per operation (default 7; 5 on PostgreSQL)
          --ops N           operations timed per run (default 10000; 1000 on PostgreSQL)
          --grants N,N…     store sizes in live grants (default 1000,1000000; 1000 on PostgreSQL)
          --memory-grants N live grants over which to measure memory per grant (default 1000000)
          --peers PATH      also run the peers' script between the rounds and print ratios: in memory
                            shared/bench/run-peers, on PostgreSQL shared/bench/run-peers-postgres (on the
                            same server, with the same numbers of callers); with --smoke too, on 2,000
                            operations a run in memory (CI gives it stand-ins: .ci/peers-standin)
          --only OP         measure only this operation, with one caller (for profiling)
          --callers N       with --only: with N concurrent callers instead
          --strings S       how codes name account, redirect URI and scope: shared (default; one
                            account, as the peers' benchmark has) or as-received (an account of its own
                            per grant, 36-character ids, each request's strings decoded afresh)
          --memory-only S   measure only memory per grant, in this process, with the strings S:
                            as-received or shared (the benchmark runs itself so for each)
          --store postgres  run on PostgresGrantStore and PostgresRateLimiter, in a throwaway schema of
                            the database at --database-url, with 1, 2 and 8 callers; adds round trips
                            and statements per operation (statements need pg_stat_statements preloaded
                            with pg_stat_statements.track=all), and between the rounds the server's
                            floor: a round trip (SELECT 1) and a durably committed one-row write; needs
                            the package trait PostgreSQL:
                            swift run -c release --traits PostgreSQL tilecast-auth bench --store postgres …
          --remembered-records N  with --store postgres: how many of the records it wrote the store
                            remembers (default 10000, as PostgresConfiguration's); each operation presents
                            a code or token the same store wrote, so it skips every lookup, as one
                            instance does; 0 measures several instances behind a balancer, which read
                            what another wrote
          --lease-size N    with --store postgres: the most admissions the rate limiter leases in one
                            round trip (default 32, as PostgresRateLimiter's); every request comes from
                            one address, which leases serve; 1 makes every admission a round trip, as
                            for requests each from an address of its own

        Prints the machine it ran on:
          bench machine processor="<name>" family=<N> model=<N> processors=<N> boot_id=<id> booted_at=<time>
        then a table, then one line per measurement:
          bench op=<operation> grants=<N> callers=<N> median_us=<µs> min_us=<µs> max_us=<µs> runs=<N> ops=<N>
        and on PostgreSQL also store=postgres round_trips=<per op> statements=<per op> remembered=<per op>
        (records answered from what the store remembers of its own writes); for each operation
        measured at more than one store size, how its cost grows (in memory each round times the sizes
        interleaved, \(Benchmark.interleavedSlice) operations of each in turn; the median of the rounds'
        ratios, and the ratio of the medians):
          bench scaling op=<operation> grants=<N> against=<N> paired_ratio=<×> ratio_of_medians=<×>
        and on PostgreSQL the server's version and whether its commits wait for their WAL flush
          bench postgres_server version=<v> fsync=<on|off> synchronous_commit=<v> wal_sync_method=<v> durable_commits=<yes|no>
          bench postgres_round_trip_us=<µs> postgres_durable_write_us=<µs> postgres_floor_us=<µs>.
        """

    var options = Benchmark.Options()
    var memoryGrants = 1_000_000
    var peers: String?
    var databaseURL: String?
    var smoke = false
    var only = false
    /// Set for the process that measures memory per grant alone, with these strings.
    var memoryOnly: RequestStrings?

    init(arguments: [String]) throws(UsageError) {
        var runs: Int?
        var operationsPerRun: Int?
        var liveGrants: [Int]?
        var only: BenchmarkOperation?
        var callers: Int?
        var storeName = "memory"
        var databaseURL: String?
        var rememberedRecords: Int?
        var leaseSize: Int?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--smoke" {
                smoke = true
                continue
            }
            guard let value = remaining.popFirst() else { throw UsageError("\(argument) needs a value") }
            switch argument {
            case "--runs":
                guard let count = Int(value), count > 0 else { throw UsageError("--runs needs a positive number") }
                runs = count
            case "--ops":
                guard let count = Int(value), count > 0 else { throw UsageError("--ops needs a positive number") }
                operationsPerRun = count
            case "--grants":
                let sizes = value.split(separator: ",").compactMap { Int($0) }
                guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 0 }) else {
                    throw UsageError("--grants needs sizes such as 1000,1000000")
                }
                liveGrants = sizes
            case "--memory-grants":
                guard let count = Int(value), count > 0 else {
                    throw UsageError("--memory-grants needs a positive number")
                }
                memoryGrants = count
            case "--peers":
                peers = value
            case "--only":
                guard let operation = BenchmarkOperation(rawValue: value) else {
                    throw UsageError(
                        "--only takes one of \(BenchmarkOperation.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                only = operation
            case "--callers":
                guard let count = Int(value), count > 0 else { throw UsageError("--callers needs a positive number") }
                callers = count
            case "--store":
                guard value == "memory" || value == "postgres" else {
                    throw UsageError("--store takes memory or postgres")
                }
                storeName = value
            case "--database-url":
                databaseURL = value
            case "--remembered-records":
                guard let count = Int(value), count >= 0 else {
                    throw UsageError("--remembered-records needs a number, 0 or more")
                }
                rememberedRecords = count
            case "--lease-size":
                guard let size = Int(value), size >= 1 else {
                    throw UsageError("--lease-size needs a number, 1 or more")
                }
                leaseSize = size
            case "--strings":
                guard let strings = RequestStrings(rawValue: value) else {
                    let names = RequestStrings.allCases.map(\.rawValue).joined(separator: " or ")
                    throw UsageError("--strings takes \(names)")
                }
                options.strings = strings
            case "--memory-only":
                guard let strings = RequestStrings(rawValue: value) else {
                    let names = RequestStrings.allCases.map(\.rawValue).joined(separator: " or ")
                    throw UsageError("--memory-only takes \(names)")
                }
                memoryOnly = strings
            default:
                throw UsageError("unknown option \(argument)")
            }
        }

        if storeName == "postgres" {
            options.store = try Self.postgresStore(
                databaseURL: databaseURL,
                rememberedRecords: rememberedRecords,
                leaseSize: leaseSize
            )
            self.databaseURL = databaseURL
            options.runs = 5
            options.operationsPerRun = 1_000
            options.liveGrants = [1_000]
            options.parallelCallers = [2, 8]
        }
        if smoke {
            options.runs = Benchmark.Options.smoke.runs
            options.operationsPerRun = Benchmark.Options.smoke.operationsPerRun
            // In memory two sizes, so that the smoke also runs the interleaved timing and its growth figures.
            options.liveGrants =
                options.store == .memory ? [1_000, 2_000] : Benchmark.Options.smoke.liveGrants
            memoryGrants = 2_000
        }
        options.runs = runs ?? options.runs
        options.operationsPerRun = operationsPerRun ?? options.operationsPerRun
        options.liveGrants = liveGrants ?? options.liveGrants
        if let only {
            options.operations = [only]
            options.parallel = false
            options.callers = callers ?? 1
            self.only = true
        } else if callers != nil {
            throw UsageError("--callers goes with --only")
        }
        if rememberedRecords != nil, storeName != "postgres" {
            throw UsageError("--remembered-records goes with --store postgres")
        }
        if leaseSize != nil, storeName != "postgres" {
            throw UsageError("--lease-size goes with --store postgres")
        }
    }

    /// The PostgreSQL store at `databaseURL`, in a build that has PostgreSQL.
    private static func postgresStore(
        databaseURL: String?,
        rememberedRecords: Int?,
        leaseSize: Int?
    ) throws(UsageError) -> BenchmarkStore {
        #if PostgreSQL
        guard let databaseURL else { throw UsageError("--store postgres needs --database-url") }
        return .postgres(
            databaseURL: databaseURL,
            rememberedRecords: rememberedRecords ?? 10_000,
            leaseSize: leaseSize ?? 32
        )
        #else
        throw PostgreSQLSupport.unavailable("bench --store postgres")
        #endif
    }

    func run() async -> Bool {
        #if DEBUG
        print("note: a debug build; measure with `swift run -c release tilecast-auth bench`")
        #endif
        if let memoryOnly {
            guard let bytes = try? await MemoryPerGrant.measureHere(grants: memoryGrants, strings: memoryOnly) else {
                print("error: memory per grant could not be measured (it needs /proc)")
                return false
            }
            print("\(MemoryPerGrant.outputPrefix)\(bytes)")
            return true
        }
        do {
            // What the engine is compared against is measured between the engine's rounds, so that every
            // ratio comes from the same minutes of the same machine.
            let onPostgres = options.store != .memory
            let comparing = !only && !smoke && !onPostgres
            var hashRuns: [Double] = []
            var portableHashRuns: [Double] = []
            var opensslRuns: [Double] = []
            var floorRuns: [Double] = []
            var peerResults: [String: PeerBenchmark.Result] = [:]
            var postgresPeerResults: [PostgresPeerBenchmark.Result] = []
            var postgresFloorRuns: [PostgresFloor] = []
            // The peers run with the smoke too, on its few operations: CI runs it with stand-ins of the peers'
            // scripts (`.ci/peers-standin`), so that the path a `--peers` run takes is run on every change.
            let postgresPeers = onPostgres && !only ? peers : nil
            let memoryPeers = !onPostgres && !only ? peers : nil
            let callerCounts = [1] + (options.parallel ? options.parallelCallers : [])
            let measurements = try await Benchmark(options: options).run(
                progress: { print("… \($0)") },
                afterRound: { [options, databaseURL, only, smoke] round in
                    if onPostgres, !only, let databaseURL,
                        let floor = await Self.postgresFloor(databaseURL: databaseURL, smoke: smoke)
                    {
                        postgresFloorRuns.append(floor)
                    }
                    if let postgresPeers, let databaseURL {
                        let results = PostgresPeerBenchmark.run(
                            script: postgresPeers,
                            databaseURL: databaseURL,
                            operations: options.operationsPerRun,
                            callers: callerCounts
                        )
                        postgresPeerResults += results ?? []
                    }
                    if comparing {
                        hashRuns.append(HashBenchmark.ours(runs: 1, iterations: 1_000_000))
                        portableHashRuns.append(HashBenchmark.ours(runs: 1, iterations: 1_000_000, portable: true))
                        floorRuns.append(HashBenchmark.exchangeFloor(runs: 1))
                        if let openssl = HashBenchmark.openssl(seconds: 1) {
                            opensslRuns.append(openssl)
                        }
                    }
                    if let memoryPeers,
                        let results = PeerBenchmark.run(
                            script: memoryPeers,
                            operations: smoke ? 2_000 : 20_000,
                            runs: 1
                        )
                    {
                        for result in results.map({ $0.measured(afterRound: round) }) {
                            peerResults[result.library] = peerResults[result.library]?.adding(result) ?? result
                        }
                    }
                }
            )
            if only || onPostgres {
                report(
                    measurements,
                    memory: nil,
                    hash: nil,
                    openssl: nil,
                    peers: nil,
                    limiter: nil,
                    storeWrites: nil,
                    accountOperations: nil
                )
                var durability: PostgresServerDurability?
                if onPostgres, !only, let databaseURL {
                    durability = await Self.postgresDurability(databaseURL: databaseURL)
                }
                reportPostgresFloor(postgresFloorRuns, durability: durability, beside: measurements)
                if postgresPeers != nil {
                    reportPostgresPeers(PostgresPeerBenchmark.combine(postgresPeerResults), beside: measurements)
                }
                return true
            }
            let memory = MemoryPerGrant.measure { strings in
                ["bench", "--memory-only", strings.rawValue, "--memory-grants", String(memoryGrants)]
            }
            let storeWrites = try await StoreWriteBenchmark.run(writes: smoke ? 10_000 : 100_000)
            let accountOperations = try await AccountOperationsBenchmark.run(
                largeGrants: memoryGrants,
                runs: smoke ? 1 : options.runs
            )
            let limiter = try await LimiterBenchmark.run(
                runs: smoke ? 1 : options.runs,
                admissions: smoke ? 2_000 : 20_000,
                keyLimit: smoke ? 10_000 : 100_000
            )
            if !comparing {
                hashRuns = [HashBenchmark.ours(runs: 1, iterations: 10_000)]
                portableHashRuns = [HashBenchmark.ours(runs: 1, iterations: 10_000, portable: true)]
                floorRuns = [HashBenchmark.exchangeFloor(runs: 1, iterations: 1_000)]
            }
            let hash = (
                used: BenchmarkMeasurement.median(of: hashRuns),
                portable: BenchmarkMeasurement.median(of: portableHashRuns),
                floor: BenchmarkMeasurement.median(of: floorRuns)
            )
            let openssl = opensslRuns.isEmpty ? nil : BenchmarkMeasurement.median(of: opensslRuns)
            let peerList = peers == nil ? nil : peerResults.keys.sorted().compactMap { peerResults[$0] }
            report(
                measurements,
                memory: memory,
                hash: hash,
                openssl: openssl,
                peers: peerList,
                limiter: limiter,
                storeWrites: storeWrites,
                accountOperations: accountOperations
            )
            return true
        } catch {
            print("bench failed: \(error)")
            return false
        }
    }

    /// The floor on the PostgreSQL server at `databaseURL` (``PostgresFloor``), or `nil` with a note
    /// when it could not be measured.
    private static func postgresFloor(databaseURL: String, smoke: Bool) async -> PostgresFloor? {
        #if PostgreSQL
        do {
            return try await PostgresFloorBenchmark.run(databaseURL: databaseURL, samples: smoke ? 20 : 200)
        } catch {
            print("… the server's floor was not measured: \(error)")
            return nil
        }
        #else
        return nil
        #endif
    }

    /// The server's version and durability settings (``PostgresServerDurability``), or `nil` with a note
    /// when they could not be read.
    private static func postgresDurability(databaseURL: String) async -> PostgresServerDurability? {
        #if PostgreSQL
        do {
            return try await PostgresFloorBenchmark.durability(databaseURL: databaseURL)
        } catch {
            print("… the server's settings were not read: \(error)")
            return nil
        }
        #else
        return nil
        #endif
    }

    /// The server's durability settings, then the floor and the single-caller exchange and refresh as
    /// multiples of it: table lines, a `bench postgres_server …` line and a
    /// `bench postgres_round_trip_us=… postgres_durable_write_us=… postgres_floor_us=…` line.
    private func reportPostgresFloor(
        _ runs: [PostgresFloor],
        durability: PostgresServerDurability?,
        beside ours: [BenchmarkMeasurement]
    ) {
        if let durability {
            let settings = durability.settings.map { "\($0.name) \($0.value)" }.joined(separator: ", ")
            print(
                "\nthe server: \(settings); "
                    + (durability.flushesCommits
                        ? "each write commits durably, waiting for its WAL flush, as PostgreSQL does as it comes"
                        : "NO write waits for its WAL flush: a crash can lose redeemed codes and rotated tokens, "
                            + "and these figures are not those of a server as it comes")
            )
            print(durability.outputLine)
        }
        guard let floor = PostgresFloor.median(of: runs) else { return }
        let lookingUp = !options.store.remembersRecords
        let least = floor.floor(lookingUp: lookingUp)
        func format(_ value: Double) -> String { String(format: "%.2f", value) }
        let multiples = ["code_exchange", "refresh"].compactMap { operation -> String? in
            guard
                let measured = ours.first(where: {
                    $0.operation == operation && $0.callers == 1 && $0.liveGrants == options.liveGrants.first
                })
            else { return nil }
            return "\(operation) \(String(format: "%.1f", measured.median / least))×"
        }
        print(
            "\nthe server's floor (median of \(runs.count), one connection): a round trip (SELECT 1) "
                + "\(format(floor.roundTrip)) µs, a one-row write committed "
                + (durability?.flushesCommits == false ? "without a flush (not durable here) " : "durably ")
                + "\(format(floor.durableWrite)) µs; "
                + (lookingUp
                    ? "an exchange or a refresh needs two of the first and one of the second: "
                    : "an exchange or a refresh of a record the store remembers needs one of each: ")
                + "\(format(least)) µs"
                + (multiples.isEmpty ? "" : "; with one caller " + multiples.joined(separator: ", ") + " it")
        )
        print(
            "bench postgres_round_trip_us=\(format(floor.roundTrip)) postgres_durable_write_us=\(format(floor.durableWrite)) postgres_floor_us=\(format(least))"
        )
    }

    /// The PostgreSQL peer beside our figures at the same numbers of callers, as a table and as
    /// `peer lib=… store=postgres op=… callers=… peer_us=… ours_us=… ratio=…` lines.
    private func reportPostgresPeers(_ peers: [PostgresPeerBenchmark.Result], beside ours: [BenchmarkMeasurement]) {
        guard !peers.isEmpty else {
            print("\nthe PostgreSQL peer script printed nothing measured: is its virtualenv installable here?")
            return
        }
        func format(_ value: Double) -> String { String(format: "%.2f", value) }
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        print(
            "\npeers on the same PostgreSQL server, measured between TilecastAuth's rounds (median µs per operation per caller):"
        )
        print("library     operation       callers   peer µs      ours µs     ours faster by")
        var lines: [String] = []
        for peer in peers {
            guard
                let match = ours.first(where: {
                    $0.operation == peer.operation && $0.callers == peer.callers
                        && $0.liveGrants == options.liveGrants.first
                })
            else { continue }
            let ratio = peer.median / match.median
            print(
                "\(pad(peer.library, 10))  \(pad(peer.operation, 14))  \(pad(String(peer.callers), 8))  \(pad(format(peer.median), 11))  \(pad(format(match.median), 10))  \(String(format: "%.1f", ratio))×"
            )
            lines.append(
                "peer lib=\(peer.library) store=postgres op=\(peer.operation) callers=\(peer.callers) peer_us=\(format(peer.median)) ours_us=\(format(match.median)) ratio=\(String(format: "%.2f", ratio)) runs=\(peer.runs.count)"
            )
        }
        print("")
        for line in lines { print(line) }
    }

    private func report(
        _ measurements: [BenchmarkMeasurement],
        memory: MemoryPerGrant.Result?,
        hash: (used: Double, portable: Double, floor: Double)?,
        openssl: Double?,
        peers: [PeerBenchmark.Result]?,
        limiter: LimiterBenchmark.Result?,
        storeWrites: StoreWriteBenchmark.Result?,
        accountOperations: AccountOperationsBenchmark.Result?
    ) {
        func format(_ value: Double) -> String { String(format: "%.2f", value) }
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        let onPostgres = options.store != .memory
        // Which machine: the peers' figures change with it far more than ours.
        print("\n" + MachineDescription.here().outputLine)
        print("\nTilecastAuth, \(options.store.name), µs per operation (median of \(options.runs) runs; min–max):")
        print(
            "operation                 live grants  callers   median      spread           ops/s"
                + (onPostgres ? "     round trips  statements  remembered" : "")
        )
        for m in measurements {
            var line =
                "\(pad(m.operation, 24))  \(pad(String(m.liveGrants), 11))  \(pad(String(m.callers), 8))  \(pad(format(m.median), 10))  \(pad("\(format(m.minimum))–\(format(m.maximum))", 15))  \(pad(String(Int(m.throughput)), 9))"
            if onPostgres {
                line +=
                    "  \(pad(m.roundTripsPerOperation.map(format) ?? "-", 11))  \(pad(m.statementsPerOperation.map(format) ?? "-", 10))"
                    + "  \(m.rememberedPerOperation.map(format) ?? "-")"
            }
            print(line)
        }
        if let memory {
            print(
                "\nmemory per live grant (grant, redeemed code, access and refresh token, session): "
                    + "\(Int(memory.asReceived)) bytes as a server receives its requests (an account of its own per "
                    + "grant, named by 36 characters; redirect URI and scope decoded per request); "
                    + "\(Int(memory.sharedStrings)) bytes with one short account name and shared strings"
            )
        }
        if let hash {
            print(
                "SHA-256 of 64 bytes: \(String(format: "%.3f", hash.used)) µs on \(HashBenchmark.implementationName)"
                    + (openssl.map { String(format: "; OpenSSL %.3f µs; ratio %.2f×", $0, hash.used / $0) } ?? "")
                    + String(format: " (portable Swift: %.3f µs)", hash.portable)
            )
            let exchange = measurements.first { $0.operation == "code_exchange" && $0.callers == 1 }
            print(
                String(
                    format: "a code exchange's floor (one 112-byte read of the kernel's CSPRNG, five SHA-256): %.2f µs",
                    hash.floor
                )
                    + (exchange.map { String(format: "; the exchange is %.1f× it", $0.median / hash.floor) } ?? "")
            )
        }
        if let limiter {
            print(
                "in-memory rate limiter: \(format(limiter.belowLimit)) µs per admission below its key limit, "
                    + "\(format(limiter.atLimit)) µs at it under key churn (\(String(format: "%.1f", limiter.atLimit / limiter.belowLimit))×)"
            )
        }
        if let accountOperations {
            let (list, revoke) = (accountOperations.grantsOfAccount, accountOperations.revokeGrants)
            print(
                "one account's operations (two grants each; medians of \(accountOperations.runs) runs of "
                    + "\(AccountOperationsBenchmark.operationsPerRun), each timing both sizes interleaved), "
                    + "at 1000 and \(accountOperations.largeGrants) grants: "
                    + "grants(of:) \(format(list.small)) and \(format(list.large)) µs "
                    + String(format: "(%.2f× by runs, ", accountOperations.pairedRatios.grantsOfAccount)
                    + "\(String(format: "%.2f", list.large / list.small))× by medians), "
                    + "revokeGrants(of:) \(format(revoke.small)) and \(format(revoke.large)) µs "
                    + String(format: "(%.2f× by runs, ", accountOperations.pairedRatios.revokeGrants)
                    + "\(String(format: "%.2f", revoke.large / revoke.small))× by medians)"
            )
        }
        if let storeWrites {
            func describe(_ latencies: StoreWriteBenchmark.Latencies) -> String {
                "median \(format(latencies.median)) µs, p99 \(format(latencies.p99)), p99.9 \(format(latencies.p999)), "
                    + "slowest \(format(latencies.maximum))"
            }
            print(
                "single store writes (a grant, two tokens, a session) over \(storeWrites.writes) grants: "
                    + "reserved \(describe(storeWrites.reserved)) (reserving took \(format(storeWrites.reservationMilliseconds)) ms); "
                    + "grown \(describe(storeWrites.grown)); "
                    + "grown, one write every \(StoreWriteBenchmark.pacedIntervalMicroseconds) µs \(describe(storeWrites.grownPaced))"
            )
        }
        let scalings = BenchmarkScaling.of(measurements)
        if !scalings.isEmpty {
            print(
                "growth with the store, one caller (the median of the rounds' ratios, each round timing the sizes "
                    + "interleaved, \(Benchmark.interleavedSlice) operations of each in turn; the ratio of the medians in brackets):"
            )
            for scaling in scalings {
                print(
                    "  \(scaling.operation.padding(toLength: 24, withPad: " ", startingAt: 0)) "
                        + "\(scaling.largeGrants) against \(scaling.smallGrants) grants: "
                        + String(format: "%.2f× (%.2f×)", scaling.pairedRatio, scaling.ratioOfMedians)
                )
            }
        }
        if let peers {
            print(
                "\npeers, measured between TilecastAuth's rounds (median µs/op), and TilecastAuth's advantage at \(options.liveGrants.first ?? 0) live grants "
                    + "(the ratio of the medians; by rounds, the median of each peer run's ratio to ours in the round before it):"
            )
            let ours = Dictionary(
                measurements.filter { $0.callers == 1 && $0.liveGrants == options.liveGrants.first }.map {
                    ($0.operation, $0)
                },
                uniquingKeysWith: { a, _ in a }
            )
            let exchange = ours["code_exchange"]
            let refresh = ours["refresh"]
            func ratio(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "-" }
            if let python = PeerBenchmark.interpreter() {
                print("  the peers ran on Python \(python.version) from \(python.prefix)")
                print("peer python=\(python.version) prefix=\(python.prefix)")
            }
            if peers.isEmpty {
                print(
                    "  the peers' script printed nothing measured: does it run here, and is its virtualenv installable?"
                )
            }
            for peer in peers {
                let exchangeRatio = exchange.map { peer.codeExchange / $0.median }
                let refreshRatio = refresh.map { peer.refresh / $0.median }
                // The same comparison round by round: each of the peer's runs against ours in the round
                // it followed, which a machine that changes speed between minutes does not tilt.
                let pairedExchange = exchange.flatMap { peer.pairedCodeExchangeAdvantage(over: $0.runs) }
                let pairedRefresh = refresh.flatMap { peer.pairedRefreshAdvantage(over: $0.runs) }
                print(
                    "  \(peer.library.padding(toLength: 9, withPad: " ", startingAt: 0)) code exchange \(format(peer.codeExchange)) µs (\(ratio(exchangeRatio))× ours; \(ratio(pairedExchange))× by rounds)   refresh \(format(peer.refresh)) µs (\(ratio(refreshRatio))× ours; \(ratio(pairedRefresh))× by rounds)"
                )
                print(
                    "peer lib=\(peer.library) code_exchange_us=\(format(peer.codeExchange)) refresh_us=\(format(peer.refresh)) exchange_ratio=\(ratio(exchangeRatio)) refresh_ratio=\(ratio(refreshRatio)) paired_exchange_ratio=\(ratio(pairedExchange)) paired_refresh_ratio=\(ratio(pairedRefresh))"
                )
            }
        }
        print("")
        for m in measurements {
            var line =
                "bench op=\(m.operation) grants=\(m.liveGrants) callers=\(m.callers) median_us=\(format(m.median)) min_us=\(format(m.minimum)) max_us=\(format(m.maximum)) runs=\(m.runs.count) ops=\(m.operationsPerRun)"
            if onPostgres {
                line +=
                    " store=postgres round_trips=\(m.roundTripsPerOperation.map(format) ?? "-") statements=\(m.statementsPerOperation.map(format) ?? "-")"
                    + " remembered=\(m.rememberedPerOperation.map(format) ?? "-")"
            }
            print(line)
        }
        for scaling in scalings {
            print(
                "bench scaling op=\(scaling.operation) grants=\(scaling.largeGrants) against=\(scaling.smallGrants) "
                    + String(
                        format: "paired_ratio=%.2f ratio_of_medians=%.2f",
                        scaling.pairedRatio,
                        scaling.ratioOfMedians
                    )
            )
        }
        if let memory {
            print(
                "bench memory_per_grant_bytes=\(Int(memory.asReceived)) "
                    + "memory_per_grant_shared_strings_bytes=\(Int(memory.sharedStrings))"
            )
        }
        if let limiter {
            print(
                "bench limiter_below_limit_us=\(String(format: "%.3f", limiter.belowLimit)) limiter_at_limit_us=\(String(format: "%.3f", limiter.atLimit))"
            )
        }
        if let accountOperations {
            let (list, revoke) = (accountOperations.grantsOfAccount, accountOperations.revokeGrants)
            print(
                "bench account_operations_grants=\(accountOperations.largeGrants)"
                    + String(
                        format: " grants_of_account_small_us=%.3f grants_of_account_large_us=%.3f",
                        list.small,
                        list.large
                    )
                    + String(
                        format: " revoke_grants_small_us=%.3f revoke_grants_large_us=%.3f",
                        revoke.small,
                        revoke.large
                    )
                    + String(
                        format: " grants_of_account_paired_ratio=%.2f revoke_grants_paired_ratio=%.2f",
                        accountOperations.pairedRatios.grantsOfAccount,
                        accountOperations.pairedRatios.revokeGrants
                    )
            )
        }
        if let storeWrites {
            func fields(_ name: String, _ latencies: StoreWriteBenchmark.Latencies) -> String {
                [
                    ("median", latencies.median), ("p99", latencies.p99), ("p999", latencies.p999),
                    ("max", latencies.maximum),
                ]
                .map { " store_write_\(name)_\($0.0)_us=\(String(format: "%.3f", $0.1))" }.joined()
            }
            print(
                "bench store_writes=\(storeWrites.writes)" + fields("reserved", storeWrites.reserved)
                    + fields("grown", storeWrites.grown)
                    + fields("grown_paced", storeWrites.grownPaced)
                    + String(format: " store_reservation_ms=%.1f", storeWrites.reservationMilliseconds)
            )
        }
        if let hash {
            print(
                "bench sha256_64_us=\(String(format: "%.3f", hash.used))"
                    + " sha256_portable_64_us=\(String(format: "%.3f", hash.portable))"
                    + " exchange_floor_us=\(String(format: "%.3f", hash.floor))"
                    + (openssl.map { String(format: " openssl_sha256_64_us=%.3f", $0) } ?? "")
            )
        }
    }
}
