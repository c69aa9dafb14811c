// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Testing

@testable import TilecastAuthPostgres

/// The configuration's limits, as they reach PostgreSQL and the pool. No database needed.
struct PostgresConfigurationTests {
    static func configuration(statementTimeout: Duration) throws -> PostgresConfiguration {
        try PostgresConfiguration(databaseURL: "postgresql:///none", statementTimeout: statementTimeout)
    }

    @Test("statement_timeout is whole milliseconds, rounded up, and at most PostgreSQL's largest")
    func statementTimeoutMilliseconds() throws {
        #expect(try Self.configuration(statementTimeout: .seconds(5)).statementTimeoutMilliseconds == 5000)
        #expect(try Self.configuration(statementTimeout: .microseconds(1500)).statementTimeoutMilliseconds == 2)
        #expect(try Self.configuration(statementTimeout: .milliseconds(1)).statementTimeoutMilliseconds == 1)
        #expect(
            try Self.configuration(statementTimeout: .seconds(Int64.max)).statementTimeoutMilliseconds
                == Int(Int32.max)
        )
    }

    @Test("The description names every limit and leaves the URL, which may carry a password, out")
    func descriptionHasNoURL() throws {
        let configuration = try PostgresConfiguration(
            databaseURL: "postgresql://tilecast:hunter2@db.internal/tilecast",
            connectionWaitTimeout: .milliseconds(250)
        )
        #expect(!configuration.description.contains("hunter2"))
        #expect(configuration.description.contains("connectionWaitTimeout: 0.25 seconds"))
    }

    @Test(
        "A schema name that is not a plain identifier, and every limit out of range, throws",
        arguments: [
            ("tilecast; DROP TABLE codes", 10, Duration.seconds(5)), ("pg_tilecast", 10, .seconds(5)),
            ("Tilecast", 10, .seconds(5)), ("", 10, .seconds(5)), ("1tilecast", 10, .seconds(5)),
            ("tilecast", 0, .seconds(5)), ("tilecast", 10, .zero),
        ]
    )
    func invalidConfigurationsThrow(schema: String, maximumConnections: Int, statementTimeout: Duration) {
        #expect {
            _ = try PostgresConfiguration(
                databaseURL: "postgresql:///none",
                schema: schema,
                maximumConnections: maximumConnections,
                statementTimeout: statementTimeout
            )
        } throws: { error in
            (error as? PostgresError)?.kind == .invalidConfiguration
        }
    }
}
#endif
