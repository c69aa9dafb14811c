// SPDX-License-Identifier: Apache-2.0

/// What a subcommand that needs PostgreSQL says in a build of `tilecast-auth` without the package trait
/// PostgreSQL, which is off by default so that nothing needs libpq unless asked.
enum PostgreSQLSupport {
    /// Refuses `subcommand`, saying how to get a build that has PostgreSQL.
    static func unavailable(_ subcommand: String) -> UsageError {
        UsageError(
            """
            \(subcommand) needs PostgreSQL, and this build of tilecast-auth has none.
            PostgreSQL support is the package trait PostgreSQL, off by default. Install libpq
            (apt-get install libpq-dev, or brew install libpq), then run
                swift run --traits PostgreSQL tilecast-auth \(subcommand) …
            (Docs/PostgreSQL.md, Setup)
            """
        )
    }
}
