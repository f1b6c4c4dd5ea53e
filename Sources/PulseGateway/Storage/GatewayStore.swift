import MsgTrans
import PulseKit
package import PulseStorage
import Synchronization

/// The gateway's database: per-app deduplication, the outbox and dead letters, in one SQLite file
/// (`gateway.sqlite` in the data directory), owned by one ``PulseStorage/SQLiteExecutor``.
///
/// Intake commits go through the executor's group commit, so concurrent HTTP requests share one
/// fsync'd transaction. The forwarder's deletes and reschedules use the same group commit. The
/// forwarder's reads go to a second, read-only connection on its own thread (``reader``): a WAL
/// reader, so they never queue behind a commit and never block one, and their prepared
/// statements stay cached.
///
/// The public surface is what `pulsegate outbox` needs; the gateway itself uses the internal API.
package final class GatewayStore: Sendable {
    /// The database file name inside the data directory.
    package static let fileName = "gateway.sqlite"
    /// WAL pages after which the executor checkpoints (SQLite's own default threshold).
    static let checkpointPages = 1_000

    let executor: SQLiteExecutor
    /// The read-only connection the forwarder reads the outbox through.
    let reader: SQLiteExecutor
    /// Rows and payload bytes in the outbox, in total and per app, kept in memory for the intake's
    /// cap checks: maintained by every commit that adds or removes rows, recounted at open, after a
    /// requeue and on the forwarder's rescans when no commit overlaps the count.
    private let depth = OutboxDepthTracker()
    /// Whether the last intake commit failed (what `/readyz` reports).
    let commitHealth = CommitHealth()

    struct Depth: Sendable, Equatable {
        var rows = 0
        var bytes = 0
        /// The same per app (apps with rows only).
        var apps: [String: AppDepth] = [:]

        /// Adds (or with negative values removes) rows and bytes of `app`.
        mutating func add(app: String, rows: Int, bytes: Int) {
            self.rows += rows
            self.bytes += bytes
            var entry = apps[app] ?? AppDepth()
            entry.rows += rows
            entry.bytes += bytes
            apps[app] = entry.rows > 0 ? entry : nil
        }
    }

    /// One app's rows and payload bytes in the outbox.
    struct AppDepth: Sendable, Equatable {
        var rows = 0
        var bytes = 0
    }

    /// The outcome of committing one HTTP batch.
    enum IntakeOutcome: Sendable, Equatable {
        /// New: the dedup row and every outbox row are durable; `seqs` are the new rows.
        /// `conflict` when it was committed as a conflicting batch (its batch id is also another
        /// body's).
        case accepted(seqs: [Int64], conflict: Bool)
        /// Seen before with the same body: nothing was stored.
        case duplicate
        /// The batch id is another body's (unexpired): nothing was stored. Map the body as a
        /// conflicting batch (``MappingContext/conflictHash``) and commit it again with
        /// `conflict: true`.
        case conflict
    }

    /// Opens (creating and migrating if needed) the store in `dataDirectory`.
    ///
    /// `commitGathering` lets an intake commit wait briefly for others to share its fsync (see
    /// `GatewayConfiguration.commitGatherMicroseconds`); off by default.
    ///
    /// - Throws: ``GatewayError`` with code `storage`.
    package static func open(dataDirectory: String, commitGathering: GroupGathering = .off) async throws -> GatewayStore
    {
        let path = dataDirectory.hasSuffix("/") ? dataDirectory + fileName : dataDirectory + "/" + fileName
        do {
            // Checkpoints run after a batch's callers were answered, not inside its COMMIT.
            let executor = try await SQLiteExecutor(
                path: path, options: SQLiteConnection.Options(deferredCheckpointPages: Self.checkpointPages),
                gathering: commitGathering, threadName: "pulse.gateway.db")
            _ = try await executor.write { connection in
                try GatewaySchema.migrator.migrate(connection)
            }
            let reader: SQLiteExecutor
            do {
                reader = try await SQLiteExecutor(
                    path: path, options: SQLiteConnection.Options(readOnly: true), threadName: "pulse.gateway.rd")
            } catch {
                try? await executor.close()
                throw error
            }
            let store = GatewayStore(executor: executor, reader: reader)
            try await store.refreshDepth()
            return store
        } catch let error as GatewayError {
            throw error
        } catch {
            throw GatewayError(.storage, "cannot open the gateway database at \(path)", underlying: error)
        }
    }

    private init(executor: SQLiteExecutor, reader: SQLiteExecutor) {
        self.executor = executor
        self.reader = reader
    }

    /// Waits for queued work and closes the database.
    package func close() async throws {
        var failure: (any Error)?
        do { try await reader.close() } catch { failure = error }
        try await executor.close()
        if let failure { throw failure }
    }

    // MARK: - Readiness

    /// Commits a tiny real change (it flips the database header's `user_version` between 0 and 1;
    /// the schema does not use it, migrations are recorded in `schema_migrations`) through the
    /// same fsync'd group commit as the intake, so it fails the way an intake commit would on a
    /// full disk, a read-only file system or a broken database. Clears ``commitHealth`` when it
    /// succeeds.
    func probeCommit() async throws {
        try await executor.commit { connection in
            let version = try connection.queryFirst("PRAGMA user_version") { try $0.column(0, as: Int.self) } ?? 0
            try connection.execute(version == 0 ? "PRAGMA user_version = 1" : "PRAGMA user_version = 0")
        }
        commitHealth.succeeded()
    }

    // MARK: - Intake

    /// Commits one HTTP batch: the dedup row and all its outbox rows, in the shared group-commit
    /// transaction. Returns once durable.
    ///
    /// The dedup key is (app, batch id, body hash). A body seen before under the batch id is a
    /// ``IntakeOutcome/duplicate``. Another unexpired body under the same batch id makes the
    /// outcome ``IntakeOutcome/conflict`` (nothing written) unless `conflict` is `true`: then the
    /// drafts, mapped as a conflicting batch, are stored under their own dedup row.
    func commitIntake(
        app: String, batchID: String, bodyHash: [UInt8], sentAt: Int64?, now: Int64, retentionMilliseconds: Int64,
        drafts: [OutboxDraft], diagnostics: DiagnosticsObservation? = nil, conflict: Bool = false,
        requestID: String? = nil
    ) async throws -> IntakeOutcome {
        try await withCheckedThrowingContinuation { continuation in
            commitIntake(
                app: app, batchID: batchID, bodyHash: bodyHash, sentAt: sentAt, now: now,
                retentionMilliseconds: retentionMilliseconds, drafts: drafts, diagnostics: diagnostics,
                conflict: conflict, requestID: requestID
            ) { continuation.resume(with: $0) }
        }
    }

    /// ``commitIntake(app:batchID:bodyHash:sentAt:now:retentionMilliseconds:drafts:diagnostics:conflict:requestID:)``
    /// without a task: `completion` runs on the commit thread once the group holding the batch is
    /// durable (``SQLiteExecutor/commit(_:completion:)``), so the intake answers from there.
    func commitIntake(
        app: String, batchID: String, bodyHash: [UInt8], sentAt: Int64?, now: Int64, retentionMilliseconds: Int64,
        drafts: [OutboxDraft], diagnostics: DiagnosticsObservation?, conflict: Bool, requestID: String?,
        completion: @escaping @Sendable (Result<IntakeOutcome, any Error>) -> Void
    ) {
        // Compressed here, on the caller's thread: the commit thread only binds the bytes.
        let stored = drafts.map { Self.stored($0) }
        let body: @Sendable (SQLiteConnection) throws -> IntakeOutcome = { connection in
            // Point lookups only: a collector with a static batch id has one row per body. Values are
            // bound straight into SQLite (no array of boxed values per statement).
            let key = { (row: inout SQLiteBindings) throws in
                try row.bind(app)
                try row.bind(batchID)
                try row.bind(bodyHash)
            }
            let seen = try connection.queryFirst(
                "SELECT expires_at FROM dedup WHERE app = ? AND batch_id = ? AND body_hash = ?", binding: key
            ) { row in try row.column(0, as: Int64.self) }
            if let seen {
                if seen > now {
                    try connection.execute(
                        "UPDATE dedup SET duplicates = duplicates + 1 WHERE app = ? AND batch_id = ? AND body_hash = ?",
                        binding: key)
                    return .duplicate
                }
                try connection.execute(
                    "DELETE FROM dedup WHERE app = ? AND batch_id = ? AND body_hash = ?", binding: key)
            }
            let taken =
                try connection.queryFirst(
                    "SELECT 1 FROM dedup WHERE app = ? AND batch_id = ? AND expires_at > ? LIMIT 1",
                    binding: { row in
                        try row.bind(app)
                        try row.bind(batchID)
                        try row.bind(now)
                    }, { _ in true }) ?? false
            if taken && !conflict { return .conflict }
            try connection.execute(
                """
                INSERT INTO dedup(app, batch_id, body_hash, first_seen, expires_at, sent_at, conflicts)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
            ) { row in
                try key(&row)
                try row.bind(now)
                try row.bind(now + retentionMilliseconds)
                try row.bind(sentAt)
                try row.bind(conflict ? 1 : 0)
            }
            var seqs: [Int64] = []
            seqs.reserveCapacity(drafts.count)
            var identities: [String: Int64] = [:]
            for (draft, payload) in zip(drafts, stored) {
                try Self.insert(
                    draft, payload: payload, httpBatchID: batchID, now: now, identities: &identities,
                    connection: connection, requestID: requestID)
                seqs.append(connection.lastInsertRowID)
            }
            if let diagnostics {
                try DiagnosticsLedger.record(diagnostics, app: app, now: now, connection)
            }
            return .accepted(seqs: seqs, conflict: conflict)
        }
        depth.begin()
        executor.commit(body) { result in
            self.depth.end { depth in
                if case .success(.accepted) = result, !drafts.isEmpty {
                    depth.add(app: app, rows: drafts.count, bytes: drafts.reduce(0) { $0 + $1.payload.count })
                }
            }
            completion(result)
        }
    }

    /// A draft's payload in wire form, with the compression the draft chose.
    private static func stored(_ draft: OutboxDraft) -> StoredPayload {
        StoredPayload(encoding: draft.payload, compression: Compression(rawValue: draft.compression) ?? .none)
    }

    /// The `identities` row of `draft`'s identity, created on first sight. `known` caches the ids
    /// already looked up in this transaction.
    private static func identityID(
        of draft: OutboxDraft, known: inout [String: Int64], connection: SQLiteConnection
    ) throws -> Int64 {
        if let id = known[draft.identityKey] { return id }
        let id: Int64
        if let found = try connection.queryFirst(
            "SELECT id FROM identities WHERE identity_key = ?", binding: { try $0.bind(draft.identityKey) },
            { try $0.column(0, as: Int64.self) }
        ) {
            id = found
        } else {
            try connection.execute(
                "INSERT INTO identities(identity_key, app, connect) VALUES (?, ?, ?)",
                [draft.identityKey, draft.app, draft.identity])
            id = connection.lastInsertRowID
        }
        known[draft.identityKey] = id
        return id
    }

    private static func insert(
        _ draft: OutboxDraft, payload: StoredPayload, httpBatchID: String, now: Int64, priority: Int? = nil,
        identities: inout [String: Int64], connection: SQLiteConnection, requestID: String? = nil
    ) throws {
        let identityID = try identityID(of: draft, known: &identities, connection: connection)
        try connection.execute(
            """
            INSERT INTO outbox(app, identity_key, identity_id, kind, priority, pulse_batch_id, payload, compression,
                record_count, fallback, http_batch_id, next_attempt_at, created_at, payload_bytes, request_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { row in
            try row.bind(draft.app)
            try row.bind(draft.identityKey)
            try row.bind(identityID)
            try row.bind(draft.kind.rawValue)
            try row.bind(priority ?? draft.priority)
            try row.bind(draft.pulseBatchID)
            try row.bind(payload.bytes)
            try row.bind(Int(payload.compression.rawValue))
            try row.bind(draft.recordCount)
            try row.bind(draft.fallback)
            try row.bind(httpBatchID)
            try row.bind(now)
            try row.bind(now)
            try row.bind(payload.plainCount)
            try row.bind(requestID)
        }
    }

    /// Rows and payload bytes currently in the outbox.
    var outboxDepth: Depth { depth.depth }

    /// Rows and payload bytes of `app` currently in the outbox (no database access).
    func outboxDepth(app: String) -> AppDepth { depth.depth(app: app) }

    /// Recounts the outbox from the database, per app (at open and after a requeue; the commits in
    /// between keep the counts current).
    func refreshDepth() async throws {
        try await depth.recount { try await self.countDepth() }
    }

    /// The outbox's rows and payload bytes per app, counted in the database.
    private func countDepth() async throws -> Depth {
        try await reader.read { connection in
            var depth = Depth()
            _ = try connection.query("SELECT app, count(*), coalesce(sum(payload_bytes), 0) FROM outbox GROUP BY app") {
                row in
                depth.add(app: try row.column(0), rows: try row.column(1), bytes: try row.column(2))
            }
            return depth
        }
    }

    // MARK: - Pruning

    /// Deletes at most `limit` expired dedup rows; returns how many were deleted. Also deletes up
    /// to `limit` identities no outbox or dead-letter row refers to any more.
    func pruneExpired(now: Int64, limit: Int) async throws -> Int {
        try await executor.commit { connection in
            try connection.execute(
                """
                DELETE FROM dedup WHERE (app, batch_id, body_hash) IN
                    (SELECT app, batch_id, body_hash FROM dedup WHERE expires_at <= ? LIMIT ?)
                """, [now, limit])
            let pruned = connection.changes
            try connection.execute(
                """
                DELETE FROM identities WHERE id IN (SELECT id FROM identities i
                    WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.identity_id = i.id)
                    AND NOT EXISTS (SELECT 1 FROM dead_letter d WHERE d.identity_id = i.id) LIMIT ?)
                """, [limit])
            return pruned
        }
    }

    // MARK: - Forwarding

    /// One identity with rows in the outbox.
    struct PendingIdentity: Sendable, Equatable {
        var identityKey: String
        var app: String
        var identity: [UInt8]
        var nextAttemptAt: Int64
    }

    /// Every identity that has outbox rows, with the earliest due time of its head.
    func pendingIdentities() async throws -> [PendingIdentity] {
        try await reader.read { connection in
            try connection.query(
                """
                SELECT i.identity_key, i.app, i.connect, o.due FROM
                    (SELECT identity_id, min(next_attempt_at) AS due FROM outbox GROUP BY identity_id) AS o
                    JOIN identities AS i ON i.id = o.identity_id
                """
            ) { row in
                PendingIdentity(
                    identityKey: try row.column(0), app: try row.column(1), identity: try row.column(2),
                    nextAttemptAt: try row.column(3))
            }
        }
    }

    /// The head of an identity's queue (crash batches first, then FIFO), or `nil` when empty.
    func head(identityKey: String) async throws -> OutboxRow? {
        try await nextRows(identityKey: identityKey, limit: 1).first
    }

    /// The first `limit` rows of an identity's queue (crash batches first, then FIFO), in wire
    /// form, in one read on the read-only connection.
    func nextRows(identityKey: String, limit: Int) async throws -> [OutboxRow] {
        try await reader.read { connection in
            try connection.query(
                """
                SELECT seq, app, identity_key, kind, priority, pulse_batch_id, payload, compression, record_count,
                    fallback, http_batch_id, attempts, next_attempt_at, created_at, payload_bytes, request_id
                FROM outbox WHERE identity_id = (SELECT id FROM identities WHERE identity_key = ?)
                ORDER BY priority, seq LIMIT ?
                """, [identityKey, max(1, limit)]
            ) { row in try Self.outboxRow(row) }
        }
    }

    /// The next `limit` event rows of an identity's queue after `seq` (FIFO), in wire form: what
    /// a sliding window reads while earlier rows are still in flight or waiting for their delete.
    /// Crash-priority rows are not read here (a window stops for them and reads from the head).
    func eventRows(identityKey: String, after seq: Int64, limit: Int) async throws -> [OutboxRow] {
        try await reader.read { connection in
            try connection.query(
                """
                SELECT seq, app, identity_key, kind, priority, pulse_batch_id, payload, compression, record_count,
                    fallback, http_batch_id, attempts, next_attempt_at, created_at, payload_bytes, request_id
                FROM outbox WHERE identity_id = (SELECT id FROM identities WHERE identity_key = ?)
                    AND priority = 1 AND seq > ?
                ORDER BY priority, seq LIMIT ?
                """, [identityKey, seq, max(1, limit)]
            ) { row in try Self.outboxRow(row) }
        }
    }

    private static func outboxRow(_ row: borrowing SQLiteRow) throws -> OutboxRow {
        OutboxRow(
            seq: try row.column(0), app: try row.column(1), identityKey: try row.column(2),
            kind: OutboxBatchKind(rawValue: try row.column(3)) ?? .events, priority: try row.column(4),
            pulseBatchID: try row.column(5), payload: try row.column(6),
            compression: UInt8(clamping: try row.column(7, as: Int.self)), recordCount: try row.column(8),
            fallback: try row.column(9), httpBatchID: try row.column(10), attempts: try row.column(11),
            nextAttemptAt: try row.column(12), createdAt: try row.column(13), plainCount: try row.column(14),
            requestID: try row.column(15))
    }

    /// Deletes a delivered row.
    func delete(seq: Int64) async throws {
        try await delete(seqs: [seq])
    }

    /// Deletes delivered rows, all in one group-commit job (it rides the intake's commits).
    func delete(seqs: [Int64]) async throws {
        guard !seqs.isEmpty else { return }
        depth.begin()
        var removed: [(app: String, bytes: Int)] = []
        defer { depth.end { depth in for row in removed { depth.add(app: row.app, rows: -1, bytes: -row.bytes) } } }
        removed = try await executor.commit { connection -> [(app: String, bytes: Int)] in
            var removed: [(app: String, bytes: Int)] = []
            for seq in seqs {
                guard let row = try Self.sizeAndApp(seq: seq, connection) else { continue }
                try connection.execute("DELETE FROM outbox WHERE seq = ?", [seq])
                if connection.changes > 0 { removed.append(row) }
            }
            return removed
        }
    }

    /// The payload size and app of an outbox row, or `nil` when there is no such row.
    private static func sizeAndApp(seq: Int64, _ connection: SQLiteConnection) throws -> (app: String, bytes: Int)? {
        try connection.queryFirst("SELECT app, payload_bytes FROM outbox WHERE seq = ?", [seq]) { row in
            (app: try row.column(0, as: String.self), bytes: try row.column(1, as: Int.self))
        }
    }

    /// Records a failed attempt and when to try again.
    func reschedule(seq: Int64, nextAttemptAt: Int64, error: String) async throws {
        try await executor.commit { connection in
            try connection.execute(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE seq = ?",
                [nextAttemptAt, error, seq])
        }
    }

    /// Moves a row to the dead-letter table.
    func deadLetter(seq: Int64, code: Int, message: String, now: Int64) async throws {
        depth.begin()
        var removed: (app: String, bytes: Int)?
        defer { depth.end { depth in if let removed { depth.add(app: removed.app, rows: -1, bytes: -removed.bytes) } } }
        removed = try await executor.commit { connection -> (app: String, bytes: Int)? in
            let row = try Self.sizeAndApp(seq: seq, connection)
            try connection.execute(
                """
                INSERT OR REPLACE INTO dead_letter(seq, app, identity_key, identity_id, kind, priority,
                    pulse_batch_id, payload, compression, record_count, fallback, http_batch_id, attempts, created_at,
                    failed_at, code, message, payload_bytes, request_id)
                SELECT seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload, compression,
                    record_count, fallback, http_batch_id, attempts + 1, created_at, ?, ?, ?, payload_bytes, request_id
                FROM outbox WHERE seq = ?
                """, [now, code, message, seq])
            try connection.execute("DELETE FROM outbox WHERE seq = ?", [seq])
            return connection.changes > 0 ? row : nil
        }
    }

    /// Replaces a crash row by event rows carrying the same records (the upstream answered 501).
    /// The new rows keep crash priority, so they still go ahead of the identity's event batches.
    func replaceWithFallback(
        seq: Int64, httpBatchID: String, drafts: [OutboxDraft], now: Int64, requestID: String? = nil
    ) async throws {
        let stored = drafts.map { Self.stored($0) }
        depth.begin()
        var removed: (app: String, bytes: Int)?
        defer {
            depth.end { depth in
                guard let removed else { return }
                depth.add(app: removed.app, rows: -1, bytes: -removed.bytes)
                for draft in drafts { depth.add(app: draft.app, rows: 1, bytes: draft.payload.count) }
            }
        }
        removed = try await executor.commit { connection -> (app: String, bytes: Int)? in
            let row = try Self.sizeAndApp(seq: seq, connection)
            try connection.execute("DELETE FROM outbox WHERE seq = ?", [seq])
            guard connection.changes > 0, let row else { return nil }
            var identities: [String: Int64] = [:]
            for (draft, payload) in zip(drafts, stored) {
                try Self.insert(
                    draft, payload: payload, httpBatchID: httpBatchID, now: now, priority: 0, identities: &identities,
                    connection: connection, requestID: requestID)
            }
            return row
        }
    }

    /// The creation time of the oldest outbox row, if any.
    func oldestCreatedAt() async throws -> Int64? {
        try await reader.read { connection in
            try connection.queryFirst("SELECT created_at FROM outbox ORDER BY seq LIMIT 1") { row in
                try row.column(0, as: Int64.self)
            }
        }
    }

    /// The number of dead letters.
    func deadLetterCount() async throws -> Int {
        try await reader.read { connection in
            try connection.queryFirst("SELECT count(*) FROM dead_letter") { row in try row.column(0, as: Int.self) }
                ?? 0
        }
    }

    // MARK: - Administration (`pulsegate outbox`)

    /// Outbox depth and age of one app.
    package struct AppSummary: Sendable, Equatable {
        /// The App ID.
        package var app: String
        /// Outbox rows (Pulse batches) waiting.
        package var batches: Int
        /// Events and crash reports in those rows.
        package var records: Int
        /// Payload bytes (uncompressed JSON).
        package var bytes: Int
        /// Creation time of the oldest row, epoch milliseconds.
        package var oldestCreatedAt: Int64
        /// Dead letters of this app.
        package var deadLetters: Int
    }

    /// One dead letter.
    package struct DeadLetter: Sendable, Equatable {
        /// The outbox sequence number it had (kept; a requeue reuses it, so it keeps its FIFO place).
        package var seq: Int64
        /// The App ID.
        package var app: String
        /// The identity key.
        package var identityKey: String
        /// Events or crashes.
        package var kind: OutboxBatchKind
        /// The Pulse batch id.
        package var pulseBatchID: String
        /// The HTTP batch id it came from.
        package var httpBatchID: String
        /// Events or crash reports in it.
        package var recordCount: Int
        /// Attempts made.
        package var attempts: Int
        /// When it was moved here, epoch milliseconds.
        package var failedAt: Int64
        /// The upstream's response code.
        package var code: Int
        /// The upstream's message.
        package var message: String
        /// The `X-Request-Id` of the HTTP request it came from (`nil` for rows stored before
        /// migration `007`).
        package var requestID: String?
    }

    /// Depth, age and dead letters per app, sorted by app.
    package func appSummaries() async throws -> [AppSummary] {
        try await executor.read { connection in
            var summaries: [String: AppSummary] = [:]
            _ = try connection.query(
                """
                SELECT app, count(*), sum(record_count), sum(payload_bytes), min(created_at)
                FROM outbox GROUP BY app
                """
            ) { row in
                let app: String = try row.column(0)
                summaries[app] = AppSummary(
                    app: app, batches: try row.column(1), records: try row.column(2), bytes: try row.column(3),
                    oldestCreatedAt: try row.column(4), deadLetters: 0)
            }
            _ = try connection.query("SELECT app, count(*) FROM dead_letter GROUP BY app") { row in
                let app: String = try row.column(0)
                let count: Int = try row.column(1)
                summaries[
                    app,
                    default: AppSummary(
                        app: app, batches: 0, records: 0, bytes: 0, oldestCreatedAt: 0, deadLetters: 0)
                ].deadLetters =
                    count
            }
            return summaries.values.sorted { $0.app < $1.app }
        }
    }

    /// Dead letters, oldest first, at most `limit`.
    package func deadLetters(limit: Int = 100) async throws -> [DeadLetter] {
        try await executor.read { connection in
            try connection.query(
                """
                SELECT seq, app, identity_key, kind, pulse_batch_id, http_batch_id, record_count, attempts,
                    failed_at, code, message, request_id
                FROM dead_letter ORDER BY seq LIMIT ?
                """, [limit]
            ) { row in
                DeadLetter(
                    seq: try row.column(0), app: try row.column(1), identityKey: try row.column(2),
                    kind: OutboxBatchKind(rawValue: try row.column(3)) ?? .events, pulseBatchID: try row.column(4),
                    httpBatchID: try row.column(5), recordCount: try row.column(6), attempts: try row.column(7),
                    failedAt: try row.column(8), code: try row.column(9), message: try row.column(10),
                    requestID: try row.column(11))
            }
        }
    }

    /// Moves dead letters back into the outbox (all of them, or those with the given sequence
    /// numbers), due at `now`, attempts reset. Returns how many were requeued.
    ///
    /// A running gateway notices requeued rows on its next outbox scan.
    package func requeue(seqs: [Int64]? = nil, now: Int64) async throws -> Int {
        depth.begin()
        var added: [(app: String, bytes: Int)] = []
        defer { depth.end { depth in for row in added { depth.add(app: row.app, rows: 1, bytes: row.bytes) } } }
        added = try await executor.write { connection -> [(app: String, bytes: Int)] in
            let selected: [Int64]
            if let seqs {
                selected = seqs
            } else {
                selected = try connection.query("SELECT seq FROM dead_letter ORDER BY seq") { row in
                    try row.column(0, as: Int64.self)
                }
            }
            var moved: [(app: String, bytes: Int)] = []
            for seq in selected {
                try connection.execute(
                    """
                    INSERT INTO outbox(seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload,
                        compression, record_count, fallback, http_batch_id, attempts, next_attempt_at, created_at,
                        payload_bytes, request_id)
                    SELECT seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload, compression,
                        record_count, fallback, http_batch_id, 0, ?, created_at, payload_bytes, request_id
                    FROM dead_letter WHERE seq = ?
                    """, [now, seq])
                if connection.changes > 0 {
                    if let row = try Self.sizeAndApp(seq: seq, connection) { moved.append(row) }
                    try connection.execute("DELETE FROM dead_letter WHERE seq = ?", [seq])
                }
            }
            return moved
        }
        return added.count
    }
}

/// The outcome of the latest intake commit: `/readyz` is 503 from a failed commit until a commit
/// (an intake or a readiness probe) succeeds again.
final class CommitHealth: Sendable {
    private let failure = Mutex<String?>(nil)

    /// Why the last commit failed, or `nil` when it succeeded (or none was made yet).
    var lastFailure: String? { failure.withLock { $0 } }

    func failed(_ error: any Error) {
        let reason = (error as? StorageError).map { "\($0.code.rawValue): \($0.message)" } ?? "\(error)"
        failure.withLock { $0 = reason }
    }

    func succeeded() {
        failure.withLock { $0 = nil }
    }
}
