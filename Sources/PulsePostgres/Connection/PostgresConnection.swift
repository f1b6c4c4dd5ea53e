import CPostgres
import Glibc
import PulseKit

/// One libpq connection. Every call blocks: use it only on the thread of the
/// ``PostgresExecutor`` that owns it (jobs receive it as an argument).
///
/// Parameters are sent out of line in binary format and results are read in binary format
/// (``PostgresRow``). ``pipeline(_:)`` sends several statements in libpq's pipeline mode and
/// reads every result after one network round trip.
package final class PostgresConnection {
    private var handle: OpaquePointer?

    /// Settings added to every connection string, before it, so the string's own values win:
    /// a bounded connect time, TCP keepalives and a user timeout (a dead server or network is
    /// noticed within seconds instead of the kernel's minutes), and a read-write session when
    /// the string names several hosts.
    static let defaults: [(String, String)] = [
        ("connect_timeout", "5"), ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"),
        ("keepalives_count", "3"), ("tcp_user_timeout", "10000"), ("target_session_attrs", "read-write"),
    ]

    /// Connects with `connectionString` (a `postgres://` URL or `key=value` pairs).
    ///
    /// - Throws: ``PostgresError`` `unavailable` with libpq's message (it never includes the
    ///   password).
    package init(connectionString: String, applicationName: String = "pulsegate") throws(PostgresError) {
        let pairs = Self.defaults + [("application_name", applicationName), ("dbname", connectionString)]
        let keys = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keyPointers = keys.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        let connection = keyPointers.withUnsafeBufferPointer { keyBuffer in
            valuePointers.withUnsafeBufferPointer { valueBuffer in
                PQconnectdbParams(keyBuffer.baseAddress, valueBuffer.baseAddress, 1)
            }
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.message(of: $0) } ?? "out of memory"
            PQfinish(connection)
            throw PostgresError(.unavailable, "cannot connect to PostgreSQL: \(message)")
        }
        handle = connection
    }

    deinit {
        PQfinish(handle)
    }

    /// Closes the connection (idempotent).
    package func close() {
        PQfinish(handle)
        handle = nil
    }

    /// Whether the connection is closed or broken (a new one is needed).
    package var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Whether a transaction is open (idle in transaction, or failed in one).
    package var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs one statement.
    ///
    /// - Throws: ``PostgresError`` from the server or the connection.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        try execute(PostgresStatement(sql, parameters))
    }

    /// Runs one statement.
    @discardableResult
    package func execute(_ statement: PostgresStatement) throws(PostgresError) -> PostgresResult {
        let handle = try connected()
        let result = Self.withParameters(statement.parameters) { count, types, values, lengths, formats in
            PQexecParams(handle, statement.sql, count, types, values, lengths, formats, 1)
        }
        return try consume(result, sql: statement.sql)
    }

    /// Runs a script of several statements without parameters (migrations), in the simple query
    /// protocol.
    package func executeScript(_ sql: String) throws(PostgresError) {
        let handle = try connected()
        var failure: PostgresError?
        guard PQsendQuery(handle, sql) == 1 else { throw connectionError("send") }
        while let result = PQgetResult(handle) {
            if failure == nil {
                do throws(PostgresError) { _ = try consume(result, sql: sql) } catch { failure = error }
            } else {
                PQclear(result)
            }
        }
        if let failure { throw failure }
    }

    /// Runs `body` in a transaction: `BEGIN` (followed by `modes`, e.g.
    /// `ISOLATION LEVEL REPEATABLE READ READ ONLY`, when given), then `COMMIT` if it returns,
    /// `ROLLBACK` if it throws.
    package func transaction<T>(_ modes: String? = nil, _ body: () throws(PostgresError) -> T) throws(PostgresError)
        -> T
    {
        try execute(modes.map { "BEGIN \($0)" } ?? "BEGIN")
        let value: T
        do {
            value = try body()
            try execute("COMMIT")
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        return value
    }

    /// Ends an open transaction with `ROLLBACK`, ignoring failures (the connection may be gone).
    package func rollbackIgnoringErrors() {
        guard isInTransaction else { return }
        _ = try? execute("ROLLBACK")
    }

    /// Sends `statements` in pipeline mode, followed by one sync, and reads every result: one
    /// round trip. After the first statement that fails, the server skips the rest until the
    /// sync (they fail with the same error); a transaction opened inside stays failed until
    /// ``rollbackIgnoringErrors()``.
    ///
    /// - Returns: one outcome per statement.
    /// - Throws: ``PostgresError`` `unavailable` when the pipeline could not be sent or read.
    package func pipeline(_ statements: [PostgresStatement]) throws(PostgresError) -> [Result<
        PostgresResult, PostgresError
    >] {
        let handle = try connected()
        guard PQenterPipelineMode(handle) == 1 else { throw connectionError("pipeline mode") }
        defer { _ = PQexitPipelineMode(handle) }
        for statement in statements {
            let sent = Self.withParameters(statement.parameters) { count, types, values, lengths, formats in
                PQsendQueryParams(handle, statement.sql, count, types, values, lengths, formats, 1)
            }
            guard sent == 1 else { throw connectionError("pipeline send") }
        }
        guard PQpipelineSync(handle) == 1 else { throw connectionError("pipeline sync") }
        var outcomes: [Result<PostgresResult, PostgresError>] = []
        outcomes.reserveCapacity(statements.count)
        var firstFailure: PostgresError?
        for statement in statements {
            guard let result = PQgetResult(handle) else { throw connectionError("pipeline read") }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
                outcomes.append(
                    .failure(
                        firstFailure
                            ?? PostgresError(.server, "skipped after an earlier failure in the pipeline")
                    ))
            } else {
                do throws(PostgresError) {
                    outcomes.append(.success(try consume(result, sql: statement.sql)))
                } catch {
                    if firstFailure == nil { firstFailure = error }
                    outcomes.append(.failure(error))
                }
            }
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        guard let sync = PQgetResult(handle) else { throw connectionError("pipeline sync read") }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced else { throw connectionError("pipeline sync read") }
        return outcomes
    }

    // MARK: - Internals

    private func connected() throws(PostgresError) -> OpaquePointer {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.unavailable, "the connection to PostgreSQL is broken")
        }
        return handle
    }

    private func connectionError(_ context: String) -> PostgresError {
        let detail = handle.map { Self.message(of: $0) } ?? "no connection"
        return PostgresError(.unavailable, "\(context) failed: \(detail)")
    }

    /// Copies a result's rows out and clears it; throws the server's error.
    private func consume(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
        guard let result else { throw connectionError("query") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
            var rows: [PostgresRow] = []
            let rowCount = PQntuples(result)
            let columns = PQnfields(result)
            rows.reserveCapacity(Int(rowCount))
            for row in 0..<rowCount {
                var cells: [[UInt8]?] = []
                cells.reserveCapacity(Int(columns))
                for column in 0..<columns {
                    if PQgetisnull(result, row, column) == 1 {
                        cells.append(nil)
                    } else {
                        let length = Int(PQgetlength(result, row, column))
                        let value = PQgetvalue(result, row, column)
                        cells.append(
                            value.map { pointer in
                                pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
                                    Array(UnsafeBufferPointer(start: $0, count: length))
                                }
                            } ?? [])
                    }
                }
                rows.append(PostgresRow(cells: cells))
            }
            let affected = PQcmdTuples(result).map { Int(String(cString: $0)) ?? 0 } ?? 0
            return PostgresResult(rows: rows, affectedRows: affected)
        }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let primary =
            PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            ?? handle.map { Self.message(of: $0) } ?? "unknown error"
        let code: PostgresError.Code = isBroken ? .unavailable : PostgresError.code(forSQLState: state)
        throw PostgresError(
            code, "\(primary) — in `\(PostgresError.abbreviated(sql))`", detail: PostgresErrorDetail(sqlState: state))
    }

    private static func message(of handle: OpaquePointer) -> String {
        guard let raw = PQerrorMessage(handle) else { return "unknown error" }
        return String(cString: raw).split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Lays the parameters out for libpq: every value in binary format, in one buffer.
    private static func withParameters<T>(
        _ parameters: [PostgresValue],
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) -> T
    ) -> T {
        let encoded = parameters.map(\.encoded)
        let types = parameters.map { Oid($0.typeOID) }
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        var storage: [UInt8] = []
        storage.reserveCapacity(encoded.reduce(0) { $0 + ($1?.count ?? 0) } + 1)
        var offsets: [Int?] = []
        for value in encoded {
            if let value {
                offsets.append(storage.count)
                storage += value
            } else {
                offsets.append(nil)
            }
        }
        storage.append(0)
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return values.withUnsafeBufferPointer { valueBuffer in
                body(
                    Int32(parameters.count), types, valueBuffer.baseAddress, lengths, formats)
            }
        }
    }
}
