/// A value in one of SQLite's five storage classes.
///
/// Used to bind parameters (through ``SQLiteBindable``) and, with ``SQLiteRow/value(at:)``, to read a column
/// whatever its storage class.
package enum SQLiteValue: Sendable, Equatable, Hashable {
    /// `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text. May contain NUL characters.
    case text(String)
    /// Raw bytes. May be empty and may contain NUL bytes.
    case blob([UInt8])
}
