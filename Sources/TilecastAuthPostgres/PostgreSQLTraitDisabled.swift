// SPDX-License-Identifier: Apache-2.0

#if !PostgreSQL
// This build of TilecastAuthPostgres has no PostgreSQL support: the package trait PostgreSQL, which brings in
// libpq, is off. The module still builds — so that `swift build` and `swift test` work on a machine without
// libpq — and names its public types only to tell whoever uses one how to turn the trait on.

/// Unavailable: TilecastAuthPostgres is built without the package trait PostgreSQL.
@available(
    *,
    unavailable,
    message:
        "PostgreSQL support is a package trait: depend on TilecastAuth with traits: [\"PostgreSQL\"] (swift build --traits PostgreSQL in this repository); see Docs/PostgreSQL.md"
)
public enum PostgresGrantStore: Sendable {}

/// Unavailable: TilecastAuthPostgres is built without the package trait PostgreSQL.
@available(
    *,
    unavailable,
    message:
        "PostgreSQL support is a package trait: depend on TilecastAuth with traits: [\"PostgreSQL\"] (swift build --traits PostgreSQL in this repository); see Docs/PostgreSQL.md"
)
public enum PostgresRateLimiter: Sendable {}

/// Unavailable: TilecastAuthPostgres is built without the package trait PostgreSQL.
@available(
    *,
    unavailable,
    message:
        "PostgreSQL support is a package trait: depend on TilecastAuth with traits: [\"PostgreSQL\"] (swift build --traits PostgreSQL in this repository); see Docs/PostgreSQL.md"
)
public enum PostgresConfiguration: Sendable {}
#endif
