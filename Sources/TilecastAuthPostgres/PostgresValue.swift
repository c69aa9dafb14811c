// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import Foundation
import TilecastAuth

/// A statement parameter, sent in PostgreSQL's binary format with its type.
///
/// Binary parameters are not parsed by the server, so no value is ever spliced into SQL text, and a
/// `float8` arrives bit for bit: times are stored as `float8` seconds since 2001-01-01 00:00 UTC, which
/// is what Foundation's `Date` holds, so a record read back equals the record written.
enum PostgresValue: Sendable {
    case bytea([UInt8])
    case text(String)
    case float8(Double)
    case int2(Int16)
    case int4(Int32)
    case uuid(UUID)
    case null(PostgresType)

    /// The parameter's type.
    var type: PostgresType {
        switch self {
        case .bytea: .bytea
        case .text: .text
        case .float8: .float8
        case .int2: .int2
        case .int4: .int4
        case .uuid: .uuid
        case .null(let type): type
        }
    }

    /// The value in binary format, or `nil` for SQL `NULL`.
    var binary: [UInt8]? {
        switch self {
        case .bytea(let bytes):
            return bytes
        case .text(let text):
            return Array(text.utf8)
        case .float8(let value):
            return withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) }
        case .int2(let value):
            return withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .int4(let value):
            return withUnsafeBytes(of: value.bigEndian) { Array($0) }
        case .uuid(let uuid):
            return withUnsafeBytes(of: uuid.uuid) { Array($0) }
        case .null:
            return nil
        }
    }
}

extension PostgresValue {
    static func digest(_ digest: SecretDigest) -> PostgresValue { .bytea(digest.bytes) }

    static func digest(_ digest: SecretDigest?) -> PostgresValue { digest.map { .bytea($0.bytes) } ?? .null(.bytea) }

    static func date(_ date: Date) -> PostgresValue { .float8(date.timeIntervalSinceReferenceDate) }

    static func date(_ date: Date?) -> PostgresValue { date.map { .date($0) } ?? .null(.float8) }

    static func grant(_ id: GrantID) -> PostgresValue { .uuid(id.rawValue) }

    static func text(_ text: String?) -> PostgresValue { text.map { .text($0) } ?? .null(.text) }
}

/// The PostgreSQL types the store uses, with their OIDs (`pg_type.oid`).
enum PostgresType: UInt32, Sendable {
    case bool = 16
    case bytea = 17
    case int8 = 20
    case int2 = 21
    case int4 = 23
    case text = 25
    case float8 = 701
    case uuid = 2950
}
#endif
