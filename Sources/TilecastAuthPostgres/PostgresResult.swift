// SPDX-License-Identifier: Apache-2.0

#if PostgreSQL  // the package trait; without it this module holds only PostgreSQLTraitDisabled.swift
import CLibPQ
import Foundation
import TilecastAuth

/// The rows a statement returned, in binary format. Owns the libpq result and frees it.
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    var rowCount: Int { Int(PQntuples(handle)) }
    var columnCount: Int { Int(PQnfields(handle)) }

    /// The row at `index`, for reading by column.
    func row(_ index: Int) -> PostgresRow {
        PostgresRow(result: self, index: Int32(index))
    }

    var rows: [PostgresRow] { (0..<rowCount).map(row) }

    /// The number of rows a command touched (`UPDATE 3` → 3).
    var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    fileprivate func isNull(_ row: Int32, _ column: Int32) -> Bool {
        PQgetisnull(handle, row, column) != 0
    }

    fileprivate func bytes(_ row: Int32, _ column: Int32) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(handle, row, column))
        guard let value = PQgetvalue(handle, row, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: value, count: length)
    }

    fileprivate func type(_ column: Int32) -> UInt32 {
        PQftype(handle, column)
    }
}

/// One row of a ``PostgresResult``. Every reader checks the column's type and length and throws
/// ``PostgresError/Kind/unexpectedResult`` rather than misread a value.
struct PostgresRow {
    fileprivate let result: PostgresResult
    fileprivate let index: Int32

    func isNull(_ column: Int) -> Bool {
        result.isNull(index, Int32(column))
    }

    private func raw(_ column: Int, _ type: PostgresType) throws(PostgresError) -> UnsafeRawBufferPointer {
        guard column < result.columnCount else {
            throw PostgresError(.unexpectedResult, message: "no column \(column)")
        }
        guard result.type(Int32(column)) == type.rawValue else {
            throw PostgresError(.unexpectedResult, message: "column \(column) is not \(type)")
        }
        guard !result.isNull(index, Int32(column)) else {
            throw PostgresError(.unexpectedResult, message: "column \(column) is NULL")
        }
        return result.bytes(index, Int32(column))
    }

    private func integer<T: FixedWidthInteger>(
        _ column: Int,
        _ type: PostgresType,
        as: T.Type
    ) throws(PostgresError) -> T {
        let bytes = try raw(column, type)
        guard bytes.count == MemoryLayout<T>.size else {
            throw PostgresError(.unexpectedResult, message: "column \(column) has \(bytes.count) bytes")
        }
        return T(bigEndian: bytes.loadUnaligned(as: T.self))
    }

    func int2(_ column: Int) throws(PostgresError) -> Int16 { try integer(column, .int2, as: Int16.self) }
    func int4(_ column: Int) throws(PostgresError) -> Int32 { try integer(column, .int4, as: Int32.self) }
    func int8(_ column: Int) throws(PostgresError) -> Int64 { try integer(column, .int8, as: Int64.self) }

    func float8(_ column: Int) throws(PostgresError) -> Double {
        Double(bitPattern: try integer(column, .float8, as: UInt64.self))
    }

    func bool(_ column: Int) throws(PostgresError) -> Bool {
        let bytes = try raw(column, .bool)
        guard bytes.count == 1 else {
            throw PostgresError(.unexpectedResult, message: "column \(column) is not a bool")
        }
        return bytes[0] != 0
    }

    func text(_ column: Int) throws(PostgresError) -> String {
        String(decoding: try raw(column, .text), as: UTF8.self)
    }

    func bytea(_ column: Int) throws(PostgresError) -> [UInt8] {
        Array(try raw(column, .bytea))
    }

    func uuid(_ column: Int) throws(PostgresError) -> UUID {
        let bytes = try raw(column, .uuid)
        guard bytes.count == 16 else {
            throw PostgresError(.unexpectedResult, message: "column \(column) is not a uuid")
        }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
        return UUID(uuid: value)
    }

    // MARK: The store's types

    func date(_ column: Int) throws(PostgresError) -> Date {
        Date(timeIntervalSinceReferenceDate: try float8(column))
    }

    func optionalDate(_ column: Int) throws(PostgresError) -> Date? {
        isNull(column) ? nil : try date(column)
    }

    func digest(_ column: Int) throws(PostgresError) -> SecretDigest {
        guard let digest = SecretDigest(bytes: try bytea(column)) else {
            throw PostgresError(.unexpectedResult, message: "column \(column) is not a 32-byte digest")
        }
        return digest
    }

    func optionalDigest(_ column: Int) throws(PostgresError) -> SecretDigest? {
        isNull(column) ? nil : try digest(column)
    }

    func grantID(_ column: Int) throws(PostgresError) -> GrantID {
        GrantID(rawValue: try uuid(column))
    }

    func optionalText(_ column: Int) throws(PostgresError) -> String? {
        isNull(column) ? nil : try text(column)
    }
}
#endif
