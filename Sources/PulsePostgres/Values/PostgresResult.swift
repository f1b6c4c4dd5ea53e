/// The rows of one statement's result, copied out of libpq (binary format), and the number of
/// rows the command affected.

import PulseKit

package struct PostgresResult: Sendable {
    /// Each row's cells, `nil` for `NULL`.
    package var rows: [PostgresRow]
    /// Rows inserted, updated or deleted (`PQcmdTuples`), 0 for other commands.
    package var affectedRows: Int

    /// Creates a result.
    package init(rows: [PostgresRow] = [], affectedRows: Int = 0) {
        self.rows = rows
        self.affectedRows = affectedRows
    }

    /// The first row, if any.
    package var first: PostgresRow? { rows.first }
}

/// One result row in binary format; columns are read by position.
package struct PostgresRow: Sendable {
    /// The cells, `nil` for `NULL`.
    package var cells: [[UInt8]?]

    /// Creates a row.
    package init(cells: [[UInt8]?]) {
        self.cells = cells
    }

    /// Whether column `index` is `NULL` (or missing).
    package func isNull(_ index: Int) -> Bool {
        index >= cells.count || cells[index] == nil
    }

    /// An `int2`, `int4` or `int8` column.
    ///
    /// - Throws: ``PostgresError`` `typeMismatch` for `NULL` or another width.
    package func int64(_ index: Int) throws(PostgresError) -> Int64 {
        guard index < cells.count, let bytes = cells[index] else { throw Self.mismatch(index, "integer") }
        guard let value = Self.integer(bytes[...]) else { throw Self.mismatch(index, "integer") }
        return value
    }

    /// An integer column as `Int`.
    package func int(_ index: Int) throws(PostgresError) -> Int {
        Int(truncatingIfNeeded: try int64(index))
    }

    /// An integer column, `nil` for `NULL`.
    package func optionalInt64(_ index: Int) throws(PostgresError) -> Int64? {
        isNull(index) ? nil : try int64(index)
    }

    /// A `text` column.
    package func string(_ index: Int) throws(PostgresError) -> String {
        String(decoding: try bytes(index), as: UTF8.self)
    }

    /// A `text` column, `nil` for `NULL`.
    package func optionalString(_ index: Int) -> String? {
        optionalBytes(index).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A `bytea` (or any) column's bytes.
    package func bytes(_ index: Int) throws(PostgresError) -> [UInt8] {
        guard index < cells.count, let bytes = cells[index] else { throw Self.mismatch(index, "bytes") }
        return bytes
    }

    /// A `bytea` column, `nil` for `NULL`.
    package func optionalBytes(_ index: Int) -> [UInt8]? {
        index < cells.count ? cells[index] : nil
    }

    /// A `boolean` column.
    package func bool(_ index: Int) throws(PostgresError) -> Bool {
        guard let first = try bytes(index).first else { throw Self.mismatch(index, "boolean") }
        return first != 0
    }

    /// A one-dimensional `int8[]` column (without `NULL` elements).
    package func int64Array(_ index: Int) throws(PostgresError) -> [Int64] {
        let data = try bytes(index)
        func word(_ at: Int) -> Int32? {
            guard at + 4 <= data.count else { return nil }
            return Int32(truncatingIfNeeded: Self.integer(data[at..<at + 4]) ?? 0)
        }
        guard let dimensions = word(0) else { throw Self.mismatch(index, "int8[]") }
        if dimensions == 0 { return [] }
        guard dimensions == 1, let count = word(12) else { throw Self.mismatch(index, "int8[]") }
        var values: [Int64] = []
        var offset = 20
        for _ in 0..<max(0, Int(count)) {
            guard let length = word(offset), length >= 0, offset + 4 + Int(length) <= data.count,
                let value = Self.integer(data[(offset + 4)..<(offset + 4 + Int(length))])
            else { throw Self.mismatch(index, "int8[]") }
            values.append(value)
            offset += 4 + Int(length)
        }
        return values
    }

    /// A big-endian signed integer of 2, 4 or 8 bytes.
    static func integer(_ bytes: ArraySlice<UInt8>) -> Int64? {
        guard [2, 4, 8].contains(bytes.count) else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        let shift = UInt64(64 - 8 * bytes.count)
        return Int64(bitPattern: value << shift) >> shift
    }

    private static func mismatch(_ index: Int, _ type: String) -> PostgresError {
        PostgresError(.typeMismatch, "column \(index) is not a non-null \(type)")
    }
}
