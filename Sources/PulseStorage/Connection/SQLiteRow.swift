import CSQLite
import PulseKit

/// The current row of a query, valid only inside the closure that receives it.
///
/// `SQLiteRow` is non-copyable and handed out as `borrowing`, so it cannot escape the row closure of
/// ``SQLiteConnection/query(_:_:_:)``; copy the values you need out of it instead.
///
/// ```swift
/// let names = try connection.query("SELECT id, name FROM device WHERE seen > ?", [since]) { row in
///     (try row.column(0, as: Int64.self), try row.column(1, as: String.self))
/// }
/// ```
package struct SQLiteRow: ~Copyable {
    let statement: OpaquePointer
    let sql: String

    init(statement: OpaquePointer, sql: String) {
        self.statement = statement
        self.sql = sql
    }

    /// The number of result columns.
    package var columnCount: Int {
        Int(sqlite3_column_count(statement))
    }

    /// The name of column `index` as given by SQLite (its `AS` alias if any).
    package func columnName(at index: Int) throws -> String {
        let column = try checkedIndex(index)
        guard let raw = sqlite3_column_name(statement, column) else {
            return ""
        }
        return String(cString: raw)
    }

    /// Whether column `index` is `NULL`.
    package func isNull(at index: Int) throws -> Bool {
        let column = try checkedIndex(index)
        return sqlite3_column_type(statement, column) == SQLITE_NULL
    }

    /// Reads column `index` as `T`, strictly (see ``SQLiteColumnDecodable``).
    ///
    /// ```swift
    /// let payload = try row.column(2, as: [UInt8].self)
    /// let note: String? = try row.column(3)
    /// ```
    package func column<T: SQLiteColumnDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        try T.decode(from: self, at: index)
    }

    /// Reads column `index` in whatever storage class it holds.
    package func value(at index: Int) throws -> SQLiteValue {
        let column = try checkedIndex(index)
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT: return .text(text(column))
        case SQLITE_BLOB: return .blob(blob(column))
        default: return .null
        }
    }

    // MARK: - Internal helpers for the decoders

    func checkedIndex(_ index: Int) throws -> Int32 {
        guard index >= 0, index < columnCount else {
            throw StorageError(
                .misuse,
                "column index \(index) out of range 0..<\(columnCount) in `\(StorageError.abbreviated(sql))`")
        }
        return Int32(index)
    }

    /// Validates the index and the storage class; returns the C column index.
    func checkedColumn(_ index: Int, accepting types: [Int32], as typeName: String) throws -> Int32 {
        let column = try checkedIndex(index)
        let actual = sqlite3_column_type(statement, column)
        guard types.contains(actual) else {
            throw StorageError(
                .typeMismatch,
                "column \(index) holds \(SQLiteRow.storageClassName(actual)), cannot read it as \(typeName)"
                    + " in `\(StorageError.abbreviated(sql))`")
        }
        return column
    }

    /// The text of a `TEXT` column, byte-exact (embedded NULs preserved).
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else {
            return ""
        }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The bytes of a `BLOB` column. A zero-length blob has a `NULL` pointer, read as `[]`.
    func blob(_ column: Int32) -> [UInt8] {
        guard let raw = sqlite3_column_blob(statement, column) else {
            return []
        }
        let count = Int(sqlite3_column_bytes(statement, column))
        return [UInt8](UnsafeRawBufferPointer(start: raw, count: count))
    }

    static func storageClassName(_ type: Int32) -> String {
        switch type {
        case SQLITE_INTEGER: return "INTEGER"
        case SQLITE_FLOAT: return "REAL"
        case SQLITE_TEXT: return "TEXT"
        case SQLITE_BLOB: return "BLOB"
        default: return "NULL"
        }
    }
}
