import OTLPProtobuf
import PulseKit
import PulseProtocol
import PulseStorage

/// The delivery state machine's queries: claiming due batches and settling their outcomes.
///
/// A batch is *due* when its `next_attempt_ms` has passed, no other sender holds its lease, the queue is
/// not held (`Retry-After`, 401/403), its endpoint is not backing off and the device's attempt window has
/// room. Due batches are claimed oldest first (by `seq`, the order they were sealed in).
///
/// A failure that is the endpoint's — no answer, 408, 429 or 5xx without `Retry-After` — backs off the
/// endpoint (`endpoint_state`), not the batch, so every batch becomes due again at the same moment and the
/// queue order survives an outage. Any other retryable answer (a 3xx, 404, 409, …) is the batch's own:
/// that batch backs off alone and newer batches overtake it.
///
/// Stored times are wall-clock times. One further ahead (by more than a minute) than the longest wait that
/// could have produced it
/// (a lease beyond its stored length or ``UploadPolicy/leaseMilliseconds``, a batch or endpoint backoff beyond
/// ``UploadPolicy/backoffCapMilliseconds``, a `Retry-After` hold beyond ``RetryAfter/maximumMilliseconds``, a
/// 401/403 hold beyond ``UploadPolicy/authenticationHoldMilliseconds``) can only come from a wall clock that
/// stepped back since it was written, and counts as passed. Claiming sets a lease
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
        /// Attempts including this one; with ``batchId`` it identifies the claim (every claim takes the next
        /// number), so a settle can tell whether the batch is still under this claim.
        var attempts: Int
        var records: Int64
        /// The batch's sequence number (`nil` for a batch sealed before sequences existed).
        var sequence: Int64?

        /// A batch row read with ``claimedColumns``, as claim number `attempts` holds it.
        init(_ row: borrowing SQLiteRow, attempts: Int) throws {
            seq = try row.column(0, as: Int64.self)
            batchId = try row.column(1, as: String.self)
            signal = Signal(storageCode: try row.column(2, as: Int.self)) ?? .logs
            recordClass = RecordClass(rawValue: try row.column(3, as: Int.self)) ?? .standard
            encoding = BodyEncoding(rawValue: try row.column(4, as: String.self)) ?? .gzip
            body = try row.column(5, as: [UInt8].self)
            records = try row.column(6, as: Int64.self)
            sequence = try row.column(7, as: Int64?.self)
            self.attempts = attempts
        }
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
        case endpointBackoff
        case attemptWindow
    }

    /// Which batches a sender may take.
    struct Scope: Sendable {
        /// Include batches routed to the background path (crash reports, attachments, large batches).
        var includesBackground: Bool
        /// Only urgent (crash) batches: conditions defer the rest.
        var urgentOnly: Bool
        /// Only batches routed to the background path.
        var backgroundOnly = false
        /// `flush`: every sealed batch, whatever its backoff, its endpoint's backoff and the attempt window
        /// (leases, `Retry-After` and 401/403 holds still apply).
        var ignoresBackoff = false
        /// Only batches with a larger `seq` (a flush walks the queue once, oldest first).
        var afterSeq: Int64 = 0
        /// The lease's length; `nil` is the policy's ``UploadPolicy/leaseMilliseconds``.
        var leaseMilliseconds: Int64?
        /// The claim is for an out-of-process transfer (stored with the lease, shown by `status`).
        var transfer = false
    }

    /// What settling an outcome did (the same for a foreground send and an out-of-process transfer).
    typealias Settlement = TransferSettlement.Effect

    /// The endpoint's backoff state.
    struct EndpointState: Sendable, Equatable {
        var failures: Int
        var holdUntilMilliseconds: Int64
    }

    static func endpointState(_ connection: SQLiteConnection, endpoint: String) throws -> EndpointState? {
        try connection.queryFirst(
            "SELECT failures, hold_until_ms FROM endpoint_state WHERE endpoint = ?", [endpoint]
        ) { row in
            EndpointState(
                failures: try row.column(0, as: Int.self), holdUntilMilliseconds: try row.column(1, as: Int64.self))
        }
    }

    /// How much further ahead than its longest wait a stored time may be before it counts as left over
    /// from a backward clock step (clocks of two processes read a moment apart, a pass that started
    /// earlier than another process's claim).
    static let clockStepTolerance: Int64 = 60_000

    /// Whether a stored deadline still holds at `now`: it is ahead, but not further ahead of the current
    /// time `current` than `longest` (+ ``clockStepTolerance``); beyond that only a backward wall-clock step
    /// can have put it, and it counts as passed.
    static func holds(_ deadline: Int64, now: Int64, longest: Int64, current: Int64? = nil) -> Bool {
        deadline > now && deadline - max(now, current ?? now) <= longest + clockStepTolerance
    }

    static func claim(
        _ connection: SQLiteConnection, now: Int64, policy: UploadPolicy, scope: Scope, endpoint: String, limit: Int,
        current: Int64? = nil
    ) throws -> Claim {
        // `now` is the pass's start (what is due); `current` the clock now, against which a stored time
        // counts as left over from a backward step.
        let current = max(now, current ?? now)
        var claim = Claim()
        if try QueueSettings.collectionStop(connection) != nil {
            claim.blockedBy = .collectionStopped
            return claim
        }
        QueueStore.expireIgnoringErrors(connection, now: now, policy: policy)
        if let hold = try QueueSettings.integer(connection, QueueSettings.authHoldUntil),
            holds(hold, now: now, longest: policy.authenticationHoldMilliseconds, current: current)
        {
            claim.blockedBy = .authentication
            claim.nextAttemptMilliseconds = hold
            return claim
        }
        if let hold = try QueueSettings.integer(connection, QueueSettings.holdUntil),
            holds(hold, now: now, longest: RetryAfter.maximumMilliseconds, current: current)
        {
            claim.blockedBy = .retryAfter
            claim.nextAttemptMilliseconds = hold
            return claim
        }
        if !scope.ignoresBackoff, let state = try endpointState(connection, endpoint: endpoint),
            holds(state.holdUntilMilliseconds, now: now, longest: policy.backoffCapMilliseconds, current: current)
        {
            claim.blockedBy = .endpointBackoff
            claim.nextAttemptMilliseconds = state.holdUntilMilliseconds
            return claim
        }
        var windowStart = try QueueSettings.integer(connection, QueueSettings.windowStart) ?? now
        var windowAttempts = try QueueSettings.integer(connection, QueueSettings.windowAttempts) ?? 0
        if now - windowStart >= policy.attemptWindowMilliseconds || now < windowStart {
            windowStart = now
            windowAttempts = 0
        }
        let budget = scope.ignoresBackoff ? Int64(limit) : Int64(policy.maximumAttemptsPerWindow) - windowAttempts
        // A lease or backoff further ahead than it can ever be set is left over from a wall clock that
        // stepped back: it has passed.
        let tolerance = clockStepTolerance
        var filter =
            "(lease_until_ms <= ?1 OR lease_until_ms > \(current + tolerance) + max(lease_ms, \(policy.leaseMilliseconds)))"
        if scope.ignoresBackoff {
            filter += " AND seq > \(scope.afterSeq)"
        } else {
            filter +=
                " AND (next_attempt_ms <= ?1 OR next_attempt_ms > \(current + policy.backoffCapMilliseconds + tolerance))"
        }
        if !scope.includesBackground {
            filter += " AND background = 0"
        } else if scope.backgroundOnly {
            filter += " AND background = 1"
        }
        if scope.urgentOnly {
            claim.deferred =
                try connection.queryFirst(
                    "SELECT count(*) FROM batch WHERE \(filter) AND class != \(RecordClass.crash.rawValue)", [now]
                ) { row in try row.column(0, as: Int.self) } ?? 0
            filter += " AND class = \(RecordClass.crash.rawValue)"
        }
        if budget <= 0 {
            let due = try connection.queryFirst("SELECT count(*) FROM batch WHERE \(filter)", [now]) { row in
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
                "SELECT \(claimedColumns) FROM batch WHERE \(filter) ORDER BY seq LIMIT ?2", [now, take]
            ) { row in try Claimed(row, attempts: try row.column(8, as: Int.self) + 1) }
            let lease = scope.leaseMilliseconds ?? policy.leaseMilliseconds
            for batch in claim.batches {
                try connection.execute(
                    """
                    UPDATE batch SET lease_until_ms = ?, lease_ms = ?, transfer = ?, attempts = attempts + 1,
                        last_attempt_ms = ?
                    WHERE seq = ?
                    """, [now + lease, lease, scope.transfer ? 1 : 0, now, batch.seq])
            }
            if !scope.ignoresBackoff {
                windowAttempts += Int64(claim.batches.count)
            }
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
        if claim.batches.isEmpty && !scope.ignoresBackoff {
            claim.nextAttemptMilliseconds = try nextAttempt(connection, scope: scope, now: now, policy: policy)
        }
        return claim
    }

    /// The earliest time a batch in `scope` becomes due (its backoff or lease), if any is queued; a stored
    /// time left over from a backward clock step counts as `now`.
    static func nextAttempt(_ connection: SQLiteConnection, scope: Scope, now: Int64, policy: UploadPolicy) throws
        -> Int64?
    {
        var filter = "1"
        if !scope.includesBackground {
            filter += " AND background = 0"
        }
        if scope.urgentOnly {
            filter += " AND class = \(RecordClass.crash.rawValue)"
        }
        return try connection.queryFirst(
            """
            SELECT min(max(
                CASE WHEN next_attempt_ms > ?1 + \(policy.backoffCapMilliseconds + clockStepTolerance) THEN ?1
                    ELSE next_attempt_ms END,
                CASE WHEN lease_until_ms > ?1 + \(clockStepTolerance) + max(lease_ms, \(policy.leaseMilliseconds))
                    THEN ?1 ELSE lease_until_ms END))
            FROM batch WHERE \(filter)
            """, [now]
        ) { row in try row.column(0, as: Int64?.self) } ?? nil
    }

    /// The batch `batchId` as claim number `attempt` took it, if it is still queued (under that claim or a
    /// newer one).
    static func claimed(_ connection: SQLiteConnection, batchId: String, attempt: Int) throws -> Claimed? {
        try connection.queryFirst("SELECT \(claimedColumns) FROM batch WHERE batch_id = ?", [batchId]) { row in
            try Claimed(row, attempts: attempt)
        }
    }

    /// The columns ``Claimed/init(_:attempts:)`` reads, in order (then `attempts`, the claim's count so far).
    static let claimedColumns = "seq, batch_id, signal, class, encoding, body, record_count, sequence, attempts"

    /// When a throttled or retryable batch may be attempted again (`now` for other outcomes): never earlier
    /// than `Retry-After`, up to 10 % later so a fleet told the same time spreads out (but never beyond the
    /// cap: the jitter is inside it); else the batch's jittered backoff for its attempt count.
    static func retryTime(
        _ outcome: UploadOutcome, attempts: Int, now: Int64, policy: UploadPolicy, random: RandomSource
    ) -> Int64 {
        switch outcome {
        case .throttled(_, let delay):
            let jitter = Int64(random.uniform(upTo: UInt64(delay / 10)))
            return now + max(1, min(RetryAfter.maximumMilliseconds, delay + jitter))
        case .retryable:
            return now + max(1, policy.backoff.delayMilliseconds(failures: attempts, random: random))
        default:
            return now
        }
    }

    /// Applies an attempt's outcome — the response table every sender shares, foreground or out of process —
    /// if the claim still holds the batch (see ``Settlement``): settling twice, or settling a claim whose
    /// lease expired and whose batch was claimed and sent again, changes and counts nothing more. A 2xx is
    /// applied to a batch still queued under a newer claim (the gateway has it; the newer claim then finds
    /// it gone).
    ///
    /// An endpoint failure (``UploadOutcome/isEndpointFailure``) backs off `endpoint` instead of the batch
    /// (see ``backOffEndpoint(_:endpoint:now:policy:random:)``); any answer that is not one clears the
    /// endpoint's backoff.
    @discardableResult
    static func settle(
        _ connection: SQLiteConnection, batch: Claimed, outcome: UploadOutcome, now: Int64, policy: UploadPolicy,
        endpoint: String, random: RandomSource
    ) throws -> Settlement {
        let holder = try connection.queryFirst("SELECT attempts, lease_until_ms FROM batch WHERE seq = ?", [batch.seq])
        {
            row in (try row.column(0, as: Int.self), try row.column(1, as: Int64.self))
        }
        guard let holder else { return .gone }
        switch outcome {
        case .delivered, .partiallyDelivered: break
        default:
            guard holder.0 == batch.attempts, holder.1 != 0 else { return .superseded }
        }
        let retryAt = retryTime(outcome, attempts: batch.attempts, now: now, policy: policy, random: random)
        if policy.diagnosticsLevel >= .batchSummaries {
            try DiagnosticsStore.countOutcome(connection, outcome: outcome, sequence: batch.sequence, now: now)
        }
        if case .retryable(let status, let text) = outcome, outcome.isEndpointFailure {
            let hold = try backOffEndpoint(connection, endpoint: endpoint, now: now, policy: policy, random: random)
            let message = clip(text)
            try reschedule(connection, batch: batch, at: now, status: status, error: message)
            try QueueStore.logError(
                connection, now: now, batchId: batch.batchId, status: status,
                message: "\(message); attempt \(batch.attempts), the endpoint backs off \(hold - now) ms")
            return .applied
        }
        try connection.execute("DELETE FROM endpoint_state WHERE endpoint = ?", [endpoint])
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
        return .applied
    }

    /// Backs `endpoint` off after a failure of its own: one more consecutive failure, and a hold of a full
    /// jitter delay (``Backoff``) for that count. A hold still running (set by a concurrent upload that
    /// failed too) is kept, so one outage counts once per attempt round. Returns the hold's end.
    static func backOffEndpoint(
        _ connection: SQLiteConnection, endpoint: String, now: Int64, policy: UploadPolicy, random: RandomSource
    ) throws -> Int64 {
        let state = try endpointState(connection, endpoint: endpoint)
        if let state, holds(state.holdUntilMilliseconds, now: now, longest: policy.backoffCapMilliseconds) {
            return state.holdUntilMilliseconds
        }
        let failures = (state?.failures ?? 0) + 1
        let hold = now + max(1, policy.backoff.delayMilliseconds(failures: failures, random: random))
        try connection.execute(
            """
            INSERT INTO endpoint_state(endpoint, failures, hold_until_ms) VALUES (?, ?, ?)
            ON CONFLICT(endpoint) DO UPDATE SET failures = excluded.failures, hold_until_ms = excluded.hold_until_ms
            """, [endpoint, failures, hold])
        return hold
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
            UPDATE batch SET lease_until_ms = 0, lease_ms = 0, transfer = 0, next_attempt_ms = ?, last_status = ?,
                last_error = ?
            WHERE seq = ?
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
