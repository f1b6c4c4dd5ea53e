import CSQLite
package import PulseKit

/// The single error type of `PulseStorage`: the shared ``PulseError`` shape with
/// ``StorageErrorCode`` and a ``StorageErrorDetail`` (the SQLite extended result code).
///
/// Messages come from SQLite (`sqlite3_errmsg`) plus the extended result code and, where useful, the SQL text
/// of the statement that failed. Bound values are never part of an error: statements carry `?` placeholders,
/// and the values bound to them are not recorded anywhere.
package typealias StorageError = PulseError<StorageErrorCode>

/// The broad category of a `PulseStorage` failure.
package enum StorageErrorCode: String, PulseErrorCode, CaseIterable {
    /// The facts an error records beside its code and message.
    package typealias Detail = StorageErrorDetail

    /// The database file could not be opened or configured (path, permissions, WAL unavailable).
    case cannotOpen
    /// The database stayed locked longer than the busy timeout (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    case busy
    /// A `UNIQUE`, `NOT NULL`, `CHECK`, `FOREIGN KEY` or primary key constraint failed.
    case constraint
    /// A write was attempted on a read-only connection or inside a read-only `read` job.
    case readOnly
    /// The disk or the database size limit is full (`SQLITE_FULL`).
    case diskFull
    /// The operating system reported an I/O error (`SQLITE_IOERR`).
    case ioError
    /// The file is corrupt or is not a database.
    case corrupt
    /// Any other error reported by the SQLite engine (syntax errors, schema errors, …).
    case sqlite
    /// A column held a storage class that cannot be read as the requested Swift type.
    case typeMismatch
    /// The recorded migrations do not match the registered, append-only migration list.
    case migration
    /// The connection or executor has been closed.
    case closed
    /// The API was used incorrectly (wrong number of bindings, column out of range, several statements).
    case misuse
    /// A group-commit batch was aborted, so this job's work was not committed.
    case batchAborted
    /// Another process holds the lock of the data directory (``FileLock/lockDataDirectory(_:)``).
    case inUse
}

/// What a ``StorageError`` records beside its code and message.
package struct StorageErrorDetail: PulseErrorDetail, Hashable {
    /// The SQLite extended result code, when the failure came from SQLite.
    package var extendedResultCode: Int?

    /// A detail without a result code.
    package init() { self.init(extendedResultCode: nil) }

    /// A detail with the SQLite extended result code.
    package init(extendedResultCode: Int?) { self.extendedResultCode = extendedResultCode }

    /// ` [sqlite N]` when the failure came from SQLite.
    package var descriptionSuffix: String { extendedResultCode.map { " [sqlite \($0)]" } ?? "" }
}

extension StorageError {
    /// The SQLite extended result code; see ``StorageErrorDetail/extendedResultCode``.
    package var extendedResultCode: Int? { detail.extendedResultCode }
}

extension StorageError {
    /// Builds an error from a SQLite result code and the connection's current error message.
    ///
    /// - Parameters:
    ///   - resultCode: the (possibly extended) result code returned by the failing call.
    ///   - database: the connection handle, used for `sqlite3_errmsg`; may be `nil` (then `sqlite3_errstr`).
    ///   - context: what was being done, e.g. `"prepare"`; combined with `sql` if given.
    ///   - sql: the statement text (never the bound values).
    init(
        resultCode: Int32, database: OpaquePointer?, context: String, sql: String? = nil, file: String = #fileID,
        line: UInt = #line
    ) {
        var reason: String
        if let database, let raw = sqlite3_errmsg(database) {
            reason = String(cString: raw)
            // The connection's message can be stale for errors that did not set it (e.g. a failed bind).
            if reason == "not an error", let fallback = sqlite3_errstr(resultCode) {
                reason = String(cString: fallback)
            }
        } else if let fallback = sqlite3_errstr(resultCode) {
            reason = String(cString: fallback)
        } else {
            reason = "unknown error"
        }
        var message = "\(context) failed: \(reason)"
        if let sql {
            message += " — in `\(StorageError.abbreviated(sql))`"
        }
        self.init(
            StorageError.code(forResultCode: resultCode), message,
            detail: StorageErrorDetail(extendedResultCode: Int(resultCode)), file: file, line: line)
    }

    /// Maps a SQLite result code (primary or extended) to a ``Code``.
    static func code(forResultCode resultCode: Int32) -> Code {
        switch resultCode & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_CONSTRAINT: return .constraint
        case SQLITE_READONLY: return .readOnly
        case SQLITE_FULL: return .diskFull
        case SQLITE_IOERR: return .ioError
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_CANTOPEN: return .cannotOpen
        case SQLITE_MISUSE, SQLITE_RANGE: return .misuse
        case SQLITE_MISMATCH: return .typeMismatch
        default: return .sqlite
        }
    }

    /// SQL text collapsed to one line and shortened, for messages.
    static func abbreviated(_ sql: String) -> String {
        let oneLine = sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        let limit = 160
        if oneLine.count <= limit {
            return oneLine
        }
        return String(oneLine.prefix(limit)) + "…"
    }
}
