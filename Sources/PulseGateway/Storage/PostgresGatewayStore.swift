import Dispatch
import Foundation
import MsgTrans
import PulseKit
import PulsePostgres
import PulseStorage
import Synchronization

/// The gateway's store in PostgreSQL (fleet mode): the dedup table, the outbox, dead letters and
/// the policy cache shared by every gateway started with the same `--store` URL.
///
/// - Intake: one `pulsegate_intake(...)` call per request through ``PulsePostgres/PostgresExecutor``'s
///   group commit, so concurrent requests share one pipelined transaction (one round trip, one
///   WAL flush); the answer waits for its `COMMIT`. A batch id decided by any node is a
///   duplicate on every node (``PostgresGatewaySchema``).
/// - Forwarding: a node sends an identity's rows only while it holds the identity's lease
///   (`identity_leases`, claimed with an upsert that only succeeds when the lease is free,
///   expired or already this node's). Leases are renewed every third of ``leaseDuration`` while
///   workers hold them and expire when the node dies, so another node takes the identity over
///   within ``leaseDuration`` plus its outbox rescan interval.
/// - Reads of the forwarder and the lease statements go to a second connection on its own thread
///   (``reader``), each statement its own transaction: they never queue behind a commit, and a
///   lease row is never held locked by a group transaction (two nodes' groups claiming and renewing
///   leases in different orders would deadlock).
///
/// PostgreSQL unreachable, failing over or read-only makes every commit throw; the intake
/// answers 503 with `Retry-After`, `/readyz` is 503, and the executors reconnect by themselves.
package final class PostgresGatewayStore: Sendable {
    let writer: PostgresExecutor
    let reader: PostgresExecutor
    /// This process's name in leases and probes (host, pid and a random part).
    let node: String
    /// How long a lease lasts without renewal.
    let leaseDuration: Duration
    let commitHealth = CommitHealth()
    private let depth = OutboxDepthTracker()
    private let leases = Mutex(Leases())
    private let renewal = Mutex<Task<Void, Never>?>(nil)

    private struct Leases {
        var nextToken: Int64 = 1
        /// Held leases: token and the monotonic nanoseconds until which the lease is surely held.
        var held: [String: (token: Int64, validUntil: UInt64)] = [:]
    }

    /// Connects (lazily; the first statement makes the connection), applies the migrations and
    /// starts renewing leases.
    ///
    /// - Throws: ``GatewayError`` with code `storage` when the database cannot be reached or
    ///   migrated.
    package static func open(url: String, leaseDuration: Duration = .seconds(10)) async throws -> PostgresGatewayStore {
        let store = PostgresGatewayStore(url: url, leaseDuration: leaseDuration)
        do {
            _ = try await store.writer.run { connection throws(PostgresError) in
                try PostgresGatewaySchema.migrator.migrate(connection)
            }
            try await store.refreshDepth()
        } catch {
            try? await store.close()
            throw GatewayError(.storage, "cannot open the PostgreSQL store", underlying: error)
        }
        store.startRenewing()
        return store
    }

    private init(url: String, leaseDuration: Duration) {
        writer = PostgresExecutor(connectionString: url, applicationName: "pulsegate", threadName: "pulse.pg.db")
        reader = PostgresExecutor(connectionString: url, applicationName: "pulsegate", threadName: "pulse.pg.rd")
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let hostName = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        node = "\(hostName):\(getpid()):\(UUID().uuidString.prefix(8))"
        self.leaseDuration = leaseDuration
    }

    /// Stops renewing, gives up held leases and closes both connections.
    package func close() async throws {
        stopRenewing()
        let held = leases.withLock { state in
            defer { state.held = [:] }
            return Array(state.held.keys)
        }
        if !held.isEmpty {
            _ = try? await writer.commit([
                PostgresStatement(
                    "DELETE FROM identity_leases WHERE owner = $1 AND identity_key = ANY($2)",
                    [.text(node), .textArray(held)])
            ])
        }
        await reader.close()
        await writer.close()
    }

    private var leaseMilliseconds: Int64 { Backoff.milliseconds(leaseDuration) }

    // MARK: - Intake

    func commitIntake(
        app: String, batchID: String, bodyHash: [UInt8], sentAt: Int64?, now: Int64, retentionMilliseconds: Int64,
        drafts: [OutboxDraft], diagnostics: DiagnosticsObservation?, conflict: Bool, requestID: String? = nil
    ) async throws -> GatewayStore.IntakeOutcome {
        let stored = drafts.map {
            StoredPayload(encoding: $0.payload, compression: Compression(rawValue: $0.compression) ?? .none)
        }
        var statements = [
            PostgresStatement(
                """
                SELECT outcome, seqs, \(Self.transactionID) FROM pulsegate_intake($1, $2, $3, $4, $5, $6, $7, $8, $9,
                    $10, $11, $12, $13, $14, $15, $16, $17, $18)
                """,
                [
                    .text(app), .text(batchID), .bytes(bodyHash), .int(now), .int(retentionMilliseconds),
                    sentAt.map { .int($0) } ?? .null, .bool(conflict),
                ] + Self.rowArrays(drafts, stored) + [requestID.map { .text($0) } ?? .null])
        ]
        if let diagnostics {
            // In the same transaction, and only when the intake just inserted this batch's dedup row
            // (its `first_seen` is this commit's `now` and it has not been seen again): a duplicate
            // or conflict records nothing, as on SQLite.
            func optional(_ value: Int64?) -> PostgresValue { value.map { .int($0) } ?? .null }
            statements.append(
                PostgresStatement(
                    """
                    SELECT pulsegate_diagnostics_record($3, $4, $5, $6, $7, $8, $9, $10, $11)
                    WHERE EXISTS (SELECT 1 FROM dedup WHERE app = $3 AND batch_id = $1 AND body_hash = $2
                        AND first_seen = $6 AND duplicates = 0 AND xmin = pg_current_xact_id()::xid)
                    """,
                    [
                        .text(batchID), .bytes(bodyHash), .text(app), .text(diagnostics.installationID),
                        .text(diagnostics.deviceID), .int(now), optional(diagnostics.sequence),
                        diagnostics.record.map { .bytes($0) } ?? .null, optional(diagnostics.attempted),
                        optional(diagnostics.sentOK), optional(diagnostics.sentWithErrors),
                    ]))
        }
        let results = try await writer.commit(statements)
        guard let row = results.first?.first else {
            throw GatewayError(.storage, "the intake function returned no row")
        }
        switch try row.int64(0) {
        case 1: return .duplicate
        case 2: return .conflict
        default:
            let seqs = try row.int64Array(1)
            depth.committed(
                transaction: try row.optionalInt64(2),
                [.init(app: app, rows: drafts.count, bytes: drafts.reduce(0) { $0 + $1.payload.count })])
            return .accepted(seqs: seqs, conflict: conflict)
        }
    }

    /// The select-list expression of the transaction id a depth-changing statement reports for
    /// ``OutboxDepthTracker/committed(transaction:_:)`` (`NULL` when the transaction wrote nothing).
    static let transactionID = "pg_current_xact_id_if_assigned()::text::bigint"

    /// Hands the depth the outbox rows a statement added (`sign` 1) or removed (-1), as it reported
    /// them with `RETURNING app, payload_bytes, <transactionID>`.
    func outboxChanged(_ rows: [PostgresRow], sign: Int) throws {
        guard let first = rows.first else { return }
        depth.committed(
            transaction: try first.optionalInt64(2),
            try rows.map { (row) throws(PostgresError) in
                .init(app: try row.string(0), rows: sign, bytes: sign * (try row.int(1)))
            })
    }

    /// The per-row arrays `pulsegate_enqueue` takes (parameters 8 to 17 of the intake).
    private static func rowArrays(_ drafts: [OutboxDraft], _ stored: [StoredPayload]) -> [PostgresValue] {
        [
            .textArray(drafts.map(\.identityKey)), .bytesArray(drafts.map { $0.identity }),
            .intArray(drafts.map { Int64($0.kind.rawValue) }), .intArray(drafts.map { Int64($0.priority) }),
            .textArray(drafts.map(\.pulseBatchID)), .bytesArray(stored.map { $0.bytes }),
            .intArray(stored.map { Int64($0.compression.rawValue) }), .intArray(drafts.map { Int64($0.recordCount) }),
            .bytesArray(drafts.map(\.fallback)), .intArray(stored.map { Int64($0.plainCount) }),
        ]
    }

    var outboxDepth: GatewayStore.Depth { depth.depth }

    func refreshDepth() async throws {
        try await depth.recountFromSnapshot { try await self.countDepth() }
    }

    /// The outbox's rows and payload bytes per app, counted in the database (every node's rows),
    /// and the snapshot the count saw (one repeatable-read transaction).
    private func countDepth() async throws -> (GatewayStore.Depth, PostgresSnapshot) {
        try await reader.run { connection throws(PostgresError) -> (GatewayStore.Depth, PostgresSnapshot) in
            try connection.transaction("ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                () throws(PostgresError) -> (GatewayStore.Depth, PostgresSnapshot) in
                let text = try connection.execute("SELECT pg_current_snapshot()::text").first?.string(0) ?? ""
                guard let snapshot = PostgresSnapshot(text: text) else {
                    throw PostgresError(.typeMismatch, "the server's snapshot is not in the xmin:xmax:xip form")
                }
                var depth = GatewayStore.Depth()
                for row in try connection.execute(
                    "SELECT app, count(*), coalesce(sum(payload_bytes), 0)::bigint FROM outbox GROUP BY app"
                ).rows {
                    depth.add(app: try row.string(0), rows: try row.int(1), bytes: try row.int(2))
                }
                return (depth, snapshot)
            }
        }
    }

    /// One app's share of ``outboxDepth`` (its `appLimits` outbox share).
    func outboxDepth(app: String) -> GatewayStore.AppDepth {
        depth.depth(app: app)
    }

    var commitStatistics: SQLiteExecutor.Statistics { writer.statistics }

    // MARK: - Readiness

    func checkWritable() async throws {
        let readOnly = try await writer.run { connection throws(PostgresError) -> Bool in
            try connection.execute(
                "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'"
            ).first?.bool(0) ?? true
        }
        if readOnly { throw PostgresError(.readOnly, "the PostgreSQL server is read-only") }
    }

    func probeCommit() async throws {
        _ = try await writer.commit([
            PostgresStatement(
                """
                INSERT INTO node_probes(node, probed_at) VALUES ($1, clock_timestamp())
                ON CONFLICT (node) DO UPDATE SET probed_at = excluded.probed_at
                """, [.text(node)])
        ])
        commitHealth.succeeded()
    }

    // MARK: - Pruning

    /// Deletes at most `limit` expired dedup rows and unreferenced identities, on one node of the
    /// fleet at a time (another node pruning now makes this return 0).
    func pruneExpired(now: Int64, limit: Int) async throws -> Int {
        try await writer.run { connection throws(PostgresError) -> Int in
            try connection.transaction { () throws(PostgresError) -> Int in
                guard
                    try connection.execute(
                        "SELECT pg_try_advisory_xact_lock($1)", [.int(PostgresGatewaySchema.pruneLock)]
                    )
                    .first?.bool(0) == true
                else { return 0 }
                let pruned = try connection.execute(
                    """
                    DELETE FROM dedup WHERE ctid IN
                        (SELECT ctid FROM dedup WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
                    """, [.int(now), .int(Int64(limit))]
                ).affectedRows
                // Exclusive against every enqueue in flight (they hold it shared): an identity
                // found unreferenced here cannot be referenced by a row committing concurrently.
                try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int(PostgresGatewaySchema.identityLock)])
                try connection.execute(
                    """
                    DELETE FROM identities WHERE id IN (SELECT id FROM identities i
                        WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.identity_id = i.id)
                        AND NOT EXISTS (SELECT 1 FROM dead_letter d WHERE d.identity_id = i.id) LIMIT $1)
                    """, [.int(Int64(limit))])
                return pruned
            }
        }
    }

    // MARK: - Forwarding

    /// Identities with outbox rows that no other node holds a live lease on.
    func pendingIdentities() async throws -> [GatewayStore.PendingIdentity] {
        let node = self.node
        return try await reader.run { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT i.identity_key, i.app, i.connect, o.due FROM
                    (SELECT identity_id, min(next_attempt_at) AS due FROM outbox GROUP BY identity_id) AS o
                    JOIN identities AS i ON i.id = o.identity_id
                    LEFT JOIN identity_leases AS l ON l.identity_key = i.identity_key
                WHERE l.identity_key IS NULL OR l.owner = $1 OR l.expires_at < clock_timestamp()
                """, [.text(node)]
            ).rows.map { (row) throws(PostgresError) in
                GatewayStore.PendingIdentity(
                    identityKey: try row.string(0), app: try row.string(1), identity: try row.bytes(2),
                    nextAttemptAt: try row.int64(3))
            }
        }
    }

    func nextRows(identityKey: String, limit: Int) async throws -> [OutboxRow] {
        try await outboxRows(
            "identity_id = (SELECT id FROM identities WHERE identity_key = $1)",
            [.text(identityKey), .int(Int64(max(1, limit)))])
    }

    /// The next `limit` event rows of an identity after `seq` (what a sliding window reads while
    /// earlier rows are in flight), as on SQLite.
    func eventRows(identityKey: String, after seq: Int64, limit: Int) async throws -> [OutboxRow] {
        try await outboxRows(
            "identity_id = (SELECT id FROM identities WHERE identity_key = $1) AND priority = 1 AND seq > $3",
            [.text(identityKey), .int(Int64(max(1, limit))), .int(seq)])
    }

    /// Outbox rows matching `filter` (`$2` is the limit) in FIFO order.
    private func outboxRows(_ filter: String, _ parameters: [PostgresValue]) async throws -> [OutboxRow] {
        try await reader.run { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT seq, app, identity_key, kind, priority, pulse_batch_id, payload, compression, record_count,
                    fallback, http_batch_id, attempts, next_attempt_at, created_at, payload_bytes, request_id
                FROM outbox WHERE \(filter)
                ORDER BY priority, seq LIMIT $2
                """, parameters
            ).rows.map { (row) throws(PostgresError) in
                OutboxRow(
                    seq: try row.int64(0), app: try row.string(1), identityKey: try row.string(2),
                    kind: OutboxBatchKind(rawValue: try row.int(3)) ?? .events, priority: try row.int(4),
                    pulseBatchID: try row.string(5), payload: try row.bytes(6),
                    compression: UInt8(clamping: try row.int(7)), recordCount: try row.int(8),
                    fallback: row.optionalBytes(9), httpBatchID: try row.string(10), attempts: try row.int(11),
                    nextAttemptAt: try row.int64(12), createdAt: try row.int64(13), plainCount: try row.int(14),
                    requestID: row.optionalString(15))
            }
        }
    }

    func delete(seqs: [Int64]) async throws {
        guard !seqs.isEmpty else { return }
        let result = try await writer.commit([
            PostgresStatement(
                "DELETE FROM outbox WHERE seq = ANY($1) RETURNING app, payload_bytes, \(Self.transactionID)",
                [.intArray(seqs)])
        ])
        try outboxChanged(result.first?.rows ?? [], sign: -1)
    }

    func reschedule(seq: Int64, nextAttemptAt: Int64, error: String) async throws {
        _ = try await writer.commit([
            PostgresStatement(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $1, last_error = $2 WHERE seq = $3",
                [.int(nextAttemptAt), .text(error), .int(seq)])
        ])
    }

    func deadLetter(seq: Int64, code: Int, message: String, now: Int64) async throws {
        let result = try await writer.commit([
            PostgresStatement(
                """
                WITH moved AS (DELETE FROM outbox WHERE seq = $1 RETURNING *)
                INSERT INTO dead_letter(seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload,
                    compression, record_count, fallback, http_batch_id, attempts, created_at, failed_at, code, message,
                    payload_bytes, request_id)
                SELECT seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload, compression,
                    record_count, fallback, http_batch_id, attempts + 1, created_at, $2, $3, $4, payload_bytes,
                    request_id FROM moved
                ON CONFLICT (seq) DO UPDATE SET attempts = excluded.attempts, failed_at = excluded.failed_at,
                    code = excluded.code, message = excluded.message
                RETURNING app, payload_bytes, \(Self.transactionID)
                """, [.int(seq), .int(now), .int(Int64(code)), .text(message)])
        ])
        try outboxChanged(result.first?.rows ?? [], sign: -1)
    }

    func replaceWithFallback(
        seq: Int64, httpBatchID: String, drafts: [OutboxDraft], now: Int64, requestID: String? = nil
    ) async throws {
        let stored = drafts.map {
            StoredPayload(encoding: $0.payload, compression: Compression(rawValue: $0.compression) ?? .none)
        }
        let arrays = Self.rowArrays(drafts, stored)
        let request: PostgresValue = requestID.map { .text($0) } ?? .null
        let replaced = try await writer.run { connection throws(PostgresError) -> PostgresRow? in
            try connection.transaction { () throws(PostgresError) -> PostgresRow? in
                guard
                    let row = try connection.execute(
                        "DELETE FROM outbox WHERE seq = $1 RETURNING app, payload_bytes, \(Self.transactionID)",
                        [.int(seq)]
                    ).first
                else { return nil }
                try connection.execute(
                    """
                    SELECT pulsegate_enqueue($1, $2, $3, 0, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
                    """, [.text(drafts.first?.app ?? ""), .text(httpBatchID), .int(now)] + arrays + [request])
                return row
            }
        }
        guard let replaced else { return }
        let app = try replaced.string(0)
        depth.committed(
            transaction: try replaced.optionalInt64(2),
            [
                .init(app: app, rows: -1, bytes: -(try replaced.int(1))),
                .init(
                    app: drafts.first?.app ?? app, rows: drafts.count, bytes: drafts.reduce(0) { $0 + $1.payload.count }
                ),
            ])
    }

    func oldestCreatedAt() async throws -> Int64? {
        try await reader.run { connection throws(PostgresError) in
            try connection.execute("SELECT created_at FROM outbox ORDER BY seq LIMIT 1").first?.int64(0)
        }
    }

    func deadLetterCount() async throws -> Int {
        try await reader.run { connection throws(PostgresError) in
            try connection.execute("SELECT count(*) FROM dead_letter").first?.int(0) ?? 0
        }
    }

    // MARK: - Leases

    func acquireLease(identityKey: String) async -> Bool {
        let token = leases.withLock { state -> Int64 in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        let sent = DispatchTime.now().uptimeNanoseconds
        let (node, milliseconds) = (self.node, leaseMilliseconds)
        let claimed = try? await reader.run { connection throws(PostgresError) in
            try connection.execute(
                PostgresStatement(
                    """
                    INSERT INTO identity_leases(identity_key, owner, token, expires_at)
                    VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
                    ON CONFLICT (identity_key) DO UPDATE SET owner = excluded.owner, token = excluded.token,
                        expires_at = excluded.expires_at
                    WHERE identity_leases.owner = excluded.owner OR identity_leases.expires_at < clock_timestamp()
                    RETURNING token
                    """, [.text(identityKey), .text(node), .int(token), .int(milliseconds)])
            ).first
        }
        guard claimed != nil else { return false }
        let validUntil = sent + UInt64(leaseMilliseconds) * 750_000
        leases.withLock { $0.held[identityKey] = (token, validUntil) }
        return true
    }

    func holdsLease(identityKey: String) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return leases.withLock { ($0.held[identityKey]?.validUntil ?? 0) > now }
    }

    func releaseLease(identityKey: String) {
        guard let token = leases.withLock({ $0.held.removeValue(forKey: identityKey)?.token }) else { return }
        let node = self.node
        let reader = self.reader
        // A later claim by this node carries another token: a late release cannot undo it.
        Task {
            _ = try? await reader.run { connection throws(PostgresError) in
                try connection.execute(
                    "DELETE FROM identity_leases WHERE identity_key = $1 AND owner = $2 AND token = $3",
                    [.text(identityKey), .text(node), .int(token)])
            }
        }
    }

    private func startRenewing() {
        let interval = leaseDuration / 3
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                await self.renewLeases()
            }
        }
        renewal.withLock { $0 = task }
    }

    /// Stops renewing leases (as a node that died does): they expire after ``leaseDuration``.
    func stopRenewing() {
        renewal.withLock { $0 }?.cancel()
    }

    /// Renews every held lease; a lease the database no longer gives this node is dropped, so
    /// its worker stops sending.
    func renewLeases() async {
        let held = leases.withLock { $0.held.map { ($0.key, $0.value.token) } }
        guard !held.isEmpty else { return }
        let sent = DispatchTime.now().uptimeNanoseconds
        let (node, milliseconds) = (self.node, leaseMilliseconds)
        guard
            let result = try? await reader.run({ connection throws(PostgresError) in
                try connection.execute(
                    """
                    UPDATE identity_leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
                    WHERE owner = $1 AND identity_key = ANY($2) RETURNING identity_key, token
                    """, [.text(node), .textArray(held.map(\.0)), .int(milliseconds)])
            })
        else { return }
        var renewed: [String: Int64] = [:]
        for row in result.rows {
            if let key = try? row.string(0), let token = try? row.int64(1) { renewed[key] = token }
        }
        let validUntil = sent + UInt64(leaseMilliseconds) * 750_000
        leases.withLock { state in
            for (key, token) in held where state.held[key]?.token == token {
                if renewed[key] == token {
                    state.held[key]?.validUntil = validUntil
                } else {
                    state.held[key] = nil
                }
            }
        }
    }

    // MARK: - Policy cache and diagnostics

    func savePolicy(app: String, revision: Int64, json: [UInt8], now: Int64) async throws {
        _ = try await writer.commit([
            PostgresStatement(
                """
                INSERT INTO policy_cache (app, revision, snapshot, updated_at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (app) DO UPDATE SET revision = excluded.revision, snapshot = excluded.snapshot,
                    updated_at = excluded.updated_at
                """, [.text(app), .int(revision), .bytes(json), .int(now)])
        ])
    }

    func cachedPolicies() async throws -> [(String, [UInt8])] {
        try await reader.run { connection throws(PostgresError) in
            try connection.execute("SELECT app, snapshot FROM policy_cache ORDER BY app").rows.map {
                (row) throws(PostgresError) in (try row.string(0), try row.bytes(1))
            }
        }
    }

    /// Every device of `app` (all apps when `nil`) with its received ranges, as
    /// ``DiagnosticsLedger/devices(app:records:_:)`` reads them on SQLite.
    func diagnosticsDevices(app: String?, records: Bool) async throws -> [(
        app: String, device: DiagnosticsLedger.Device
    )] {
        let filter = app == nil ? "" : " WHERE app = $1"
        let parameters: [PostgresValue] = app.map { [.text($0)] } ?? []
        return try await reader.run { connection throws(PostgresError) in
            var devices = try connection.execute(
                """
                SELECT app, installation_id, device_id, first_seen, last_seen, batches_received, highest_sequence,
                    attempted, sent_ok, sent_with_errors, \(records ? "latest" : "NULL::bytea")
                FROM diagnostics_device\(filter) ORDER BY app, installation_id
                """, parameters
            ).rows.map { (row) throws(PostgresError) in
                (
                    app: try row.string(0),
                    device: DiagnosticsLedger.Device(
                        installationID: try row.string(1), deviceID: try row.string(2), firstSeen: try row.int64(3),
                        lastSeen: try row.int64(4), batchesReceived: try row.int64(5),
                        highestSequence: try row.int64(6), attempted: try row.optionalInt64(7),
                        sentOK: try row.optionalInt64(8), sentWithErrors: try row.optionalInt64(9),
                        latest: row.optionalBytes(10))
                )
            }
            let ranges = try connection.execute(
                """
                SELECT app, installation_id, low, high, first_at FROM diagnostics_received\(filter)
                ORDER BY app, installation_id, low
                """, parameters
            ).rows.map { (row) throws(PostgresError) in
                (
                    app: try row.string(0), installationID: try row.string(1),
                    range: DiagnosticsLedger.ReceivedRange(
                        low: try row.int64(2), high: try row.int64(3), firstAt: try row.int64(4))
                )
            }
            DiagnosticsLedger.attach(ranges, to: &devices)
            return devices
        }
    }

}
