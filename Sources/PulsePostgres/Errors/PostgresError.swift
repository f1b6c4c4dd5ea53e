/// The single error type of `PulsePostgres`.
///
/// Messages come from the server or libpq (the primary message and the SQLSTATE), plus the
/// first part of the statement that failed. Parameter values are never part of an error: they
/// travel as out-of-line parameters and are not recorded anywhere. The connection string is not
/// quoted either (it may hold a password).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The broad category of a failure.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// No connection could be made, or the connection broke (the server stopped, failed over,
        /// the network went away). The operation may be retried once the server is back.
        case unavailable
        /// The server refused a write because it is read-only (a standby, or
        /// `default_transaction_read_only`), SQLSTATE class 25006.
        case readOnly
        /// A unique, foreign key, not-null or check constraint failed (SQLSTATE class 23).
        case constraint
        /// The transaction was aborted by a deadlock or a serialization failure (SQLSTATE 40001,
        /// 40P01); running it again can succeed.
        case transient
        /// Any other error the server reported (syntax, schema, …).
        case server
        /// A result column did not hold the type asked for.
        case typeMismatch
        /// The recorded migrations do not match the registered, append-only list.
        case migration
        /// The executor has been closed.
        case closed
    }

    /// The category of the failure.
    public let code: Code
    /// A human-readable message. Never contains parameter values or the connection string.
    public let message: String
    /// The server's SQLSTATE, when the server reported the failure.
    public let sqlState: String?
    /// The error that caused this one, if any.
    public let underlying: (any Error)?

    /// Creates an error.
    public init(code: Code, message: String, sqlState: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.underlying = underlying
    }

    public var description: String {
        var text = "PostgresError(\(code.rawValue)): \(message)"
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        if let underlying { text += "; underlying: \(underlying)" }
        return text
    }

    /// The code of a server error with this SQLSTATE.
    static func code(forSQLState state: String?) -> Code {
        guard let state else { return .unavailable }
        if state == "25006" { return .readOnly }
        if state == "40001" || state == "40P01" { return .transient }
        // 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
        if state.hasPrefix("08") || state.hasPrefix("57P") { return .unavailable }
        if state.hasPrefix("23") { return .constraint }
        return .server
    }

    /// SQL text collapsed to one line and shortened, for messages.
    static func abbreviated(_ sql: String) -> String {
        let oneLine = sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return oneLine.count <= 120 ? oneLine : String(oneLine.prefix(120)) + "…"
    }

    static let closedExecutor = PostgresError(code: .closed, message: "the executor is closed")
}
