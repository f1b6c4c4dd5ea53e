/// A Swift value that can be bound to a `?` parameter of a statement.
///
/// `Int64`, `Int`, `Double`, `String`, `[UInt8]` (a blob) and ``SQLiteValue`` conform. Pass `nil` in a
/// bindings array to bind `NULL`:
///
/// ```swift
/// try connection.execute("INSERT INTO t(a, b, c) VALUES (?, ?, ?)", [42, "text", nil])
/// ```
package protocol SQLiteBindable {
    /// The value to bind.
    var sqliteValue: SQLiteValue { get }
}

extension SQLiteValue: SQLiteBindable {
    package var sqliteValue: SQLiteValue { self }
}

extension Int64: SQLiteBindable {
    package var sqliteValue: SQLiteValue { .integer(self) }
}

extension Int: SQLiteBindable {
    package var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Double: SQLiteBindable {
    package var sqliteValue: SQLiteValue { .real(self) }
}

extension String: SQLiteBindable {
    package var sqliteValue: SQLiteValue { .text(self) }
}

extension [UInt8]: SQLiteBindable {
    package var sqliteValue: SQLiteValue { .blob(self) }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    package var sqliteValue: SQLiteValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return wrapped.sqliteValue
        }
    }
}
