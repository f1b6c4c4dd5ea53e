package import PulseKit

/// The single error type of `PulsePostgres`: the shared ``PulseError`` shape with
/// ``PostgresErrorCode`` and a ``PostgresErrorDetail`` (the SQLSTATE).
///
/// Messages come from the server or libpq (the primary message and the SQLSTATE), plus the
/// first part of the statement that failed. Parameter values are never part of an error: they
/// travel as out-of-line parameters and are not recorded anywhere. The connection string is not
/// quoted either (it may hold a password).
package typealias PostgresError = PulseError<PostgresErrorCode>

/// The broad category of a `PulsePostgres` failure.
package enum PostgresErrorCode: String, PulseErrorCode, CaseIterable {
    /// The facts an error records beside its code and message.
    package typealias Detail = PostgresErrorDetail

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

/// What a ``PostgresError`` records beside its code and message.
package struct PostgresErrorDetail: PulseErrorDetail, Hashable {
    /// The server's SQLSTATE, when the server reported the failure.
    package var sqlState: String?

    /// A detail without a SQLSTATE.
    package init() { self.init(sqlState: nil) }

    /// A detail with the server's SQLSTATE.
    package init(sqlState: String?) { self.sqlState = sqlState }

    /// ` [SQLSTATE X]` when the server reported one.
    package var descriptionSuffix: String { sqlState.map { " [SQLSTATE \($0)]" } ?? "" }
}

extension PostgresError {
    /// The server's SQLSTATE; see ``PostgresErrorDetail/sqlState``.
    package var sqlState: String? { detail.sqlState }

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

    /// The error of an operation on a closed executor.
    static var closedExecutor: PostgresError { PostgresError(.closed, "the executor is closed") }
}
