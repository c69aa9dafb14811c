// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
/// A parameterised SQL statement, prepared once per connection under its name and then executed by
/// name: the server parses and plans it once, and parameters never become SQL text.
struct PostgresStatement: Hashable, Sendable {
    /// The prepared statement's name on every connection of one pool.
    let name: String
    /// The SQL, with `$1`, `$2`, … for parameters.
    let sql: String
}
#endif
