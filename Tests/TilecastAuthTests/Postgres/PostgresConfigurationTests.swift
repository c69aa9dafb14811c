// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait: swift test --traits PostgreSQL
import Testing

@testable import TilecastAuthPostgres

/// The configuration's limits, as they reach PostgreSQL and the pool. No database needed.
struct PostgresConfigurationTests {
    static func configuration(statementTimeout: Duration) -> PostgresConfiguration {
        PostgresConfiguration(databaseURL: "postgresql:///none", statementTimeout: statementTimeout)
    }

    @Test("statement_timeout is whole milliseconds, rounded up, and at most PostgreSQL's largest")
    func statementTimeoutMilliseconds() {
        #expect(Self.configuration(statementTimeout: .seconds(5)).statementTimeoutMilliseconds == 5000)
        #expect(Self.configuration(statementTimeout: .microseconds(1500)).statementTimeoutMilliseconds == 2)
        #expect(Self.configuration(statementTimeout: .milliseconds(1)).statementTimeoutMilliseconds == 1)
        #expect(
            Self.configuration(statementTimeout: .seconds(Int64.max)).statementTimeoutMilliseconds == Int(Int32.max)
        )
    }

    @Test("The description names every limit and leaves the URL, which may carry a password, out")
    func descriptionHasNoURL() {
        let configuration = PostgresConfiguration(
            databaseURL: "postgresql://tilecast:hunter2@db.internal/tilecast",
            connectionWaitTimeout: .milliseconds(250)
        )
        #expect(!configuration.description.contains("hunter2"))
        #expect(configuration.description.contains("connectionWaitTimeout: 0.25 seconds"))
    }
}
#endif
