import PulseStorage

/// The delivery state machine's queries: claiming due batches and settling their outcomes.
///
/// A batch is *due* when its `next_attempt_ms` has passed, no other sender holds its lease, the queue is
/// not held (`Retry-After`, 401/403) and the device's attempt window has room. Claiming sets a lease
/// (`lease_until_ms`), so a second process (a background drain next to the foreground loop) skips it; a
/// sender killed mid-upload leaves the lease to expire, after which the batch is sent again with the same
/// id and bytes.
enum DeliveryStore {
    /// A batch claimed for one attempt.
    struct Claimed: Sendable {
        var seq: Int64
        var batchId: String
        var signal: Signal
        var recordClass: RecordClass
        var encoding: BodyEncoding
        var body: [UInt8]
        /// Attempts including this one.
        var attempts: Int
        var records: Int64
        /// The batch's sequence number (`nil` for a batch sealed before sequences existed).
        var sequence: Int64?
    }

    /// The result of a claim.
    struct Claim: Sendable {
        var batches: [Claimed] = []
        /// Due batches left waiting because conditions defer non-urgent uploads.
        var deferred = 0
        /// When something may next be attempted (a batch's backoff, a hold, the attempt window), if known.
        var nextAttemptMilliseconds: Int64?
        /// Why nothing was claimed, if a hold or the attempt window is the cause.
        var blockedBy: Blocker?
    }

    /// What stops all sending for now.
    enum Blocker: String, Sendable {
        case collectionStopped
        case retryAfter
        case authentication
        case attemptWindow
    }

    /// Which batches a sender may take.
    struct Scope: Sendable {
        /// Include batches routed to the background path (crash reports, attachments, large batches).
        var includesBackground: Bool
        /// Only urgent (crash) batches: conditions defer the rest.
        var urgentOnly: Bool
    }

    static func claim(
        _ connection: SQLiteConnection, now: Int64, policy: UploadPolicy, scope: Scope, limit: Int
    ) throws -> Claim {
        var claim = Claim()
        if try QueueSettings.collectionStop(connection) != nil {
            claim.blockedBy = .collectionStopped
            return claim
        }
        QueueStore.expireIgnoringErrors(connection, now: now, policy: policy)
        if let hold = try QueueSettings.integer(connection, QueueSettings.authHoldUntil), hold > now {
            claim.blockedBy = .authentication
            claim.nextAttemptMilliseconds = hold
            return claim
        }
        if let hold = try QueueSettings.integer(connection, QueueSettings.holdUntil), hold > now {
            claim.blockedBy = .retryAfter
            claim.nextAttemptMilliseconds = hold
            return claim
        }
        var windowStart = try QueueSettings.integer(connection, QueueSettings.windowStart) ?? now
        var windowAttempts = try QueueSettings.integer(connection, QueueSettings.windowAttempts) ?? 0
        if now - windowStart >= policy.attemptWindowMilliseconds || now < windowStart {
            windowStart = now
            windowAttempts = 0
        }
        let budget = Int64(policy.maximumAttemptsPerWindow) - windowAttempts
        var filter = "next_attempt_ms <= ? AND lease_until_ms <= ?"
        if !scope.includesBackground {
            filter += " AND background = 0"
        }
        if scope.urgentOnly {
            claim.deferred =
                try connection.queryFirst(
                    "SELECT count(*) FROM batch WHERE \(filter) AND class != \(RecordClass.crash.rawValue)", [now, now]
                ) { row in try row.column(0, as: Int.self) } ?? 0
            filter += " AND class = \(RecordClass.crash.rawValue)"
        }
        if budget <= 0 {
            let due = try connection.queryFirst("SELECT count(*) FROM batch WHERE \(filter)", [now, now]) { row in
                try row.column(0, as: Int.self)
            }
            if (due ?? 0) > 0 {
                claim.blockedBy = .attemptWindow
                claim.nextAttemptMilliseconds = windowStart + policy.attemptWindowMilliseconds
                return claim
            }
        } else {
            let take = Int(min(Int64(limit), budget))
            claim.batches = try connection.query(
                """
                SELECT seq, batch_id, signal, class, encoding, body, attempts, record_count, sequence FROM batch
                WHERE \(filter) ORDER BY seq LIMIT ?
                """, [now, now, take]
            ) { row in
                Claimed(
                    seq: try row.column(0, as: Int64.self), batchId: try row.column(1, as: String.self),
                    signal: Signal(rawValue: try row.column(2, as: Int.self)) ?? .logs,
                    recordClass: RecordClass(rawValue: try row.column(3, as: Int.self)) ?? .standard,
                    encoding: BodyEncoding(rawValue: try row.column(4, as: String.self)) ?? .gzip,
                    body: try row.column(5, as: [UInt8].self), attempts: try row.column(6, as: Int.self) + 1,
                    records: try row.column(7, as: Int64.self), sequence: try row.column(8, as: Int64?.self))
            }
            for batch in claim.batches {
                try connection.execute(
                    """
                    UPDATE batch SET lease_until_ms = ?, attempts = attempts + 1, last_attempt_ms = ? WHERE seq = ?
                    """, [now + policy.leaseMilliseconds, now, batch.seq])
            }
            windowAttempts += Int64(claim.batches.count)
            if policy.diagnosticsLevel >= .batchSummaries {
                try DiagnosticsStore.countAttempts(connection, claim.batches.count)
            }
        }
        // Persist the window only when it counted something: an idle claim writes nothing, so an idle
        // foreground loop costs no fsync.
        if !claim.batches.isEmpty {
            try QueueSettings.set(connection, QueueSettings.windowStart, windowStart)
            try QueueSettings.set(connection, QueueSettings.windowAttempts, windowAttempts)
        }
        if claim.batches.isEmpty {
            claim.nextAttemptMilliseconds = try nextAttempt(connection, scope: scope)
        }
        return claim
    }

    /// The earliest time a batch in `scope` becomes due (its backoff or lease), if any is queued.
    static func nextAttempt(_ connection: SQLiteConnection, scope: Scope) throws -> Int64? {
        var filter = "1"
        if !scope.includesBackground {
            filter += " AND background = 0"
        }
        if scope.urgentOnly {
            filter += " AND class = \(RecordClass.crash.rawValue)"
        }
        return try connection.queryFirst(
            "SELECT min(max(next_attempt_ms, lease_until_ms)) FROM batch WHERE \(filter)"
        ) { row in try row.column(0, as: Int64?.self) } ?? nil
    }

    /// Applies an attempt's outcome. `retryAt` is the next attempt time for retryable and throttled outcomes
    /// (computed by the caller with the injected clock and random source).
    static func settle(
        _ connection: SQLiteConnection, batch: Claimed, outcome: UploadOutcome, now: Int64, retryAt: Int64,
        policy: UploadPolicy
    ) throws {
        if policy.diagnosticsLevel >= .batchSummaries {
            try DiagnosticsStore.countOutcome(connection, outcome: outcome, sequence: batch.sequence, now: now)
        }
        switch outcome {
        case .delivered:
            try connection.execute("DELETE FROM batch WHERE seq = ?", [batch.seq])
        case .partiallyDelivered(let rejected, let message):
            try connection.execute("DELETE FROM batch WHERE seq = ?", [batch.seq])
            try QueueStore.countDrop(connection, .partiallyRejected, records: rejected, batches: 0, bytes: 0)
            try QueueStore.logError(
                connection, now: now, batchId: batch.batchId, status: 200,
                message: "partial success: \(rejected) of \(batch.records) records rejected"
                    + (message.map { ": \(clip($0))" } ?? ""))
        case .rejected(let status):
            let bytes = Int64(batch.body.count)
            let deleted = try deleteBatch(connection, seq: batch.seq)
            if deleted {
                try QueueStore.countDrop(connection, .rejected, records: batch.records, batches: 1, bytes: bytes)
            }
            try QueueStore.logError(
                connection, now: now, batchId: batch.batchId, status: status,
                message: "HTTP \(status): the batch can never succeed; dropped")
        case .authenticationRequired(let status):
            try reschedule(connection, batch: batch, at: now, status: status, error: "HTTP \(status)")
            try QueueSettings.set(connection, QueueSettings.authHoldUntil, now + policy.authenticationHoldMilliseconds)
            try QueueStore.logError(
                connection, now: now, batchId: batch.batchId, status: status,
                message: "HTTP \(status): queue held until the policy is refreshed")
        case .throttled(let status, let delay):
            try reschedule(connection, batch: batch, at: retryAt, status: status, error: "HTTP \(status)")
            let existing = try QueueSettings.integer(connection, QueueSettings.holdUntil) ?? 0
            try QueueSettings.set(connection, QueueSettings.holdUntil, max(existing, retryAt))
            try QueueStore.logError(
                connection, now: now, batchId: batch.batchId, status: status,
                message: "HTTP \(status): Retry-After \(delay) ms")
        case .retryable(let status, let message):
            try reschedule(connection, batch: batch, at: retryAt, status: status, error: clip(message))
            try QueueStore.logError(
                connection, now: now, batchId: batch.batchId, status: status,
                message: "\(clip(message)); attempt \(batch.attempts), retry in \(retryAt - now) ms")
        }
    }

    private static func deleteBatch(_ connection: SQLiteConnection, seq: Int64) throws -> Bool {
        try connection.execute("DELETE FROM batch WHERE seq = ?", [seq])
        return connection.changes > 0
    }

    private static func reschedule(
        _ connection: SQLiteConnection, batch: Claimed, at time: Int64, status: Int?, error: String
    ) throws {
        try connection.execute(
            """
            UPDATE batch SET lease_until_ms = 0, next_attempt_ms = ?, last_status = ?, last_error = ? WHERE seq = ?
            """, [time, status, error, batch.seq])
    }

    /// Error text kept short in the log.
    private static func clip(_ text: String) -> String {
        text.count <= 200 ? text : String(text.prefix(200)) + "…"
    }
}

extension QueueStore {
    /// Expiry inside a claim; a failure there must not stop sending.
    static func expireIgnoringErrors(_ connection: SQLiteConnection, now: Int64, policy: UploadPolicy) {
        _ = try? connection.transaction { try expire(connection, now: now, policy: policy) }
    }
}
