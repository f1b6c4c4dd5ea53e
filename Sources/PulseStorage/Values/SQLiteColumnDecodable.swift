import CSQLite

/// A Swift type that can be read from a result column with ``SQLiteRow/column(_:as:)``.
///
/// Reads are strict about storage classes so that schema mistakes surface as errors instead of silent
/// conversions: `Int64`/`Int` read `INTEGER`, `Double` reads `REAL` or `INTEGER`, `String` reads `TEXT`,
/// `[UInt8]` reads `BLOB`, and ``SQLiteValue`` reads anything. Only `Optional` accepts `NULL`.
package protocol SQLiteColumnDecodable {
    /// Reads the value of column `index` (zero-based) of `row`.
    ///
    /// - Throws: ``StorageError`` with code ``StorageError/Code/typeMismatch`` when the column's storage class
    ///   cannot be represented by this type.
    static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> Self
}

extension SQLiteValue: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> SQLiteValue {
        try row.value(at: index)
    }
}

extension Int64: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> Int64 {
        let column = try row.checkedColumn(index, accepting: [SQLITE_INTEGER], as: "Int64")
        return sqlite3_column_int64(row.statement, column)
    }
}

extension Int: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> Int {
        let column = try row.checkedColumn(index, accepting: [SQLITE_INTEGER], as: "Int")
        return Int(sqlite3_column_int64(row.statement, column))
    }
}

extension Double: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> Double {
        let column = try row.checkedColumn(index, accepting: [SQLITE_FLOAT, SQLITE_INTEGER], as: "Double")
        return sqlite3_column_double(row.statement, column)
    }
}

extension String: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> String {
        let column = try row.checkedColumn(index, accepting: [SQLITE_TEXT], as: "String")
        return row.text(column)
    }
}

extension [UInt8]: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> [UInt8] {
        let column = try row.checkedColumn(index, accepting: [SQLITE_BLOB], as: "[UInt8]")
        return row.blob(column)
    }
}

extension Optional: SQLiteColumnDecodable where Wrapped: SQLiteColumnDecodable {
    package static func decode(from row: borrowing SQLiteRow, at index: Int) throws -> Wrapped? {
        if try row.isNull(at: index) {
            return nil
        }
        return try Wrapped.decode(from: row, at: index)
    }
}
