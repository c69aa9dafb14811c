// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuthBenchmarks

/// What a PostgreSQL run says of its server's commits: durable only when they wait for their WAL flush.
struct PostgresServerDurabilityTests {
    private static func server(fsync: String, synchronousCommit: String) -> PostgresServerDurability {
        PostgresServerDurability(settings: [
            .init(name: "server_version", value: "15.14 (Debian 15.14-0+deb12u1)"),
            .init(name: "fsync", value: fsync),
            .init(name: "synchronous_commit", value: synchronousCommit),
            .init(name: "wal_sync_method", value: "fdatasync"),
        ])
    }

    @Test("Commits are durable with fsync on and synchronous_commit anything but off")
    func durableOnlyWhenFlushed() {
        for level in ["on", "local", "remote_write", "remote_apply"] {
            #expect(Self.server(fsync: "on", synchronousCommit: level).flushesCommits, "synchronous_commit \(level)")
        }
        #expect(!Self.server(fsync: "on", synchronousCommit: "off").flushesCommits)
        #expect(!Self.server(fsync: "off", synchronousCommit: "on").flushesCommits)
        // A server that did not report fsync is not taken for durable.
        let unreported = PostgresServerDurability(settings: [.init(name: "synchronous_commit", value: "on")])
        #expect(!unreported.flushesCommits)
    }

    @Test("The output line names every setting read and the verdict, for CI to grep")
    func outputLine() {
        #expect(
            Self.server(fsync: "on", synchronousCommit: "on").outputLine
                == "bench postgres_server version=15.14 fsync=on synchronous_commit=on wal_sync_method=fdatasync durable_commits=yes"
        )
        #expect(
            Self.server(fsync: "off", synchronousCommit: "on").outputLine
                == "bench postgres_server version=15.14 fsync=off synchronous_commit=on wal_sync_method=fdatasync durable_commits=no"
        )
    }
}
