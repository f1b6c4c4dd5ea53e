import PulseStorage

/// The diagnostics tables of the queue: the batch sequence, the cumulative delivery counters and the window of
/// the latest upload errors.
///
/// Every update runs inside the transaction of the operation it counts (sealing, claiming, settling), so the
/// counters are exactly as durable as the queue: a crash never loses a counted attempt nor counts one twice.
enum DiagnosticsStore {
    /// The most error entries kept (the proposal's "window of latest 10 errors").
    static let errorWindow = 10
    /// The longest error description kept, in characters.
    static let descriptionLimit = 200

    /// Starts the counting session when the queue is new (`started_ms` 0). Returns the session start.
    @discardableResult
    static func startSession(_ connection: SQLiteConnection, now: Int64) throws -> Int64 {
        try connection.execute("UPDATE diagnostics_state SET started_ms = ? WHERE id = 1 AND started_ms = 0", [now])
        return try connection.queryFirst("SELECT started_ms FROM diagnostics_state WHERE id = 1") { row in
            try row.column(0, as: Int64.self)
        } ?? now
    }

    /// Takes the next batch sequence number. It is committed with the batch that uses it; the counter only
    /// grows, so a number is never reused, even after its batch is dropped or delivered.
    static func nextSequence(_ connection: SQLiteConnection) throws -> Int64 {
        try connection.execute("UPDATE diagnostics_state SET last_sequence = last_sequence + 1 WHERE id = 1")
        return try connection.queryFirst("SELECT last_sequence FROM diagnostics_state WHERE id = 1") { row in
            try row.column(0, as: Int64.self)
        } ?? 1
    }

    /// Counts upload attempts (at claim time, in the claim's transaction).
    static func countAttempts(_ connection: SQLiteConnection, _ count: Int) throws {
        guard count > 0 else { return }
        try connection.execute("UPDATE diagnostics_state SET attempted = attempted + ? WHERE id = 1", [count])
    }

    /// Counts the outcome of one attempt and records an error entry when it failed (or was partially rejected).
    static func countOutcome(
        _ connection: SQLiteConnection, outcome: UploadOutcome, sequence: Int64?, now: Int64
    ) throws {
        let error: (code: Int, domain: String, description: String)?
        switch outcome {
        case .delivered:
            error = nil
        case .partiallyDelivered(let rejected, let message):
            error = (200, "partialSuccess", "\(rejected) records rejected" + (message.map { ": \($0)" } ?? ""))
        case .rejected(let status):
            error = (status, "http", "HTTP \(status): the batch can never succeed")
        case .authenticationRequired(let status):
            error = (status, "http", "HTTP \(status): authentication required")
        case .throttled(let status, let delay):
            error = (status, "http", "HTTP \(status): Retry-After \(delay) ms")
        case .retryable(let status, let message):
            error = (status ?? 0, status == nil ? "transport" : "http", message)
        }
        switch outcome {
        case .delivered, .partiallyDelivered:
            try connection.execute("UPDATE diagnostics_state SET sent_ok = sent_ok + 1 WHERE id = 1")
        default:
            try connection.execute("UPDATE diagnostics_state SET with_errors = with_errors + 1 WHERE id = 1")
        }
        guard let error else { return }
        try connection.execute("UPDATE diagnostics_state SET errors_total = errors_total + 1 WHERE id = 1")
        let description =
            error.description.count <= descriptionLimit
            ? error.description : String(error.description.prefix(descriptionLimit)) + "…"
        try connection.execute(
            "INSERT INTO diagnostics_error(at_ms, code, domain, description, batch_number) VALUES (?, ?, ?, ?, ?)",
            [now, error.code, error.domain, description, sequence ?? 0])
        try connection.execute(
            "DELETE FROM diagnostics_error WHERE id <= (SELECT max(id) FROM diagnostics_error) - ?", [errorWindow])
    }

    /// The counters as they stand in `connection`'s transaction.
    static func snapshot(_ connection: SQLiteConnection) throws -> DiagnosticsSnapshot {
        var snapshot =
            try connection.queryFirst(
                """
                SELECT started_ms, last_sequence, attempted, sent_ok, with_errors, errors_total
                FROM diagnostics_state WHERE id = 1
                """
            ) { row in
                DiagnosticsSnapshot(
                    sessionStartedMilliseconds: try row.column(0, as: Int64.self),
                    lastSequence: try row.column(1, as: Int64.self),
                    batchesAttempted: try row.column(2, as: Int64.self),
                    batchesSentSuccessfully: try row.column(3, as: Int64.self),
                    batchesWithErrors: try row.column(4, as: Int64.self),
                    totalErrors: try row.column(5, as: Int64.self), errorHistory: [], droppedRecords: [:])
            } ?? DiagnosticsSnapshot()
        snapshot.errorHistory = try connection.query(
            "SELECT code, domain, description, batch_number, at_ms FROM diagnostics_error ORDER BY id DESC LIMIT ?",
            [errorWindow]
        ) { row in
            DiagnosticsSnapshot.ErrorEntry(
                code: try row.column(0, as: Int.self), domain: try row.column(1, as: String.self),
                description: try row.column(2, as: String.self), batchNumber: try row.column(3, as: Int64.self),
                atMilliseconds: try row.column(4, as: Int64.self))
        }
        for reason in DropReason.allCases {
            snapshot.droppedRecords[reason] = 0
        }
        let drops = try connection.query("SELECT reason, records FROM drop_count") { row in
            (try row.column(0, as: String.self), try row.column(1, as: Int64.self))
        }
        for (raw, records) in drops {
            if let reason = DropReason(rawValue: raw) { snapshot.droppedRecords[reason] = records }
        }
        return snapshot
    }
}
