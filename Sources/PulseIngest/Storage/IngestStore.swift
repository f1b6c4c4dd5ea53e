import Foundation
import PulseKit
import PulseStorage

/// The durable side of the ingest server: one SQLite database in WAL mode with `synchronous=FULL`,
/// owned by a ``SQLiteExecutor``.
///
/// Batches go through the executor's group commit, so concurrent batches share one `COMMIT` (one
/// fsync) and each caller resumes only once its batch is durable. Replays are recognised inside the
/// same transaction that would store them, so a batch racing its own replay is still stored once.
final class IngestStore: Sendable {
    /// The database file name inside the data directory.
    static let fileName = "ingest.sqlite"

    let executor: SQLiteExecutor
    let path: String
    private let clock: PulseClock
    /// The data directory's lock (``FileLock/lockDataDirectory(_:)``), released by ``close()``.
    private let lock: FileLock

    private init(executor: SQLiteExecutor, path: String, clock: PulseClock, lock: FileLock) {
        self.lock = lock
        self.executor = executor
        self.path = path
        self.clock = clock
    }

    /// Creates `directory` if needed and takes its lock (``FileLock/lockDataDirectory(_:)``), before
    /// anything else: a second ingest server on the directory stops here.
    static func lockDirectory(_ directory: String) throws(IngestError) -> FileLock {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw IngestError(.storageFailed, "cannot create the data directory \(directory)", underlying: error)
        }
        do {
            return try FileLock.lockDataDirectory(directory)
        } catch {
            throw IngestError(.startFailed, error.message)
        }
    }

    /// Opens (creating if needed) `directory/ingest.sqlite` and applies the schema; the store keeps
    /// `lock` (from ``lockDirectory(_:)``) and releases it when it closes, or at once if it fails.
    static func open(
        directory: String, busyTimeout: Duration, maximumBatchSize: Int, clock: PulseClock, lock: FileLock
    ) async throws(IngestError) -> IngestStore {
        let path = (directory as NSString).appendingPathComponent(fileName)
        let milliseconds = Int(
            busyTimeout.components.seconds * 1_000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000)
        do {
            let executor = try await SQLiteExecutor(
                path: path, options: SQLiteConnection.Options(busyTimeoutMilliseconds: max(0, milliseconds)),
                maximumBatchSize: maximumBatchSize, threadName: "pulse.ingest.db")
            let migrator = IngestSchema.migrator
            do {
                _ = try await executor.write { connection in try migrator.migrate(connection) }
                // A larger page cache keeps the random-order unique indexes (event and crash ids) in
                // memory instead of re-reading their pages for every insert.
                try await executor.write { connection in try connection.execute("PRAGMA cache_size = -32768") }
                // Savepoint sub-journals (one savepoint per group-commit job) stay in memory instead of
                // spilling to a temporary file past 64 KiB: without this, every page a batch touches is
                // also written to a temp file (about 100 pwrite calls per 20-event batch). They hold the
                // original pages a job changed and are emptied when the job's savepoint is released, so
                // they are bounded by one batch's pages (under 1 MiB for a 64-event batch). Durability is
                // unchanged: the WAL and its fsync are not involved.
                try await executor.write { connection in try connection.execute("PRAGMA temp_store = MEMORY") }
            } catch {
                try? await executor.close()
                throw error
            }
            return IngestStore(executor: executor, path: path, clock: clock, lock: lock)
        } catch {
            lock.release()
            throw IngestError(.storageFailed, "cannot open the ingest database \(path)", underlying: error)
        }
    }

    /// Closes the database after every queued job has run.
    func close() async {
        try? await executor.close()
        lock.release()
    }

    // MARK: - Batches

    /// Stores an event batch once: nothing if (app, batchId) is known, otherwise every event whose
    /// (app, id) — and for crash events (app, `app.crash.id`) — is new. Returns after the commit.
    func storeEvents(_ batch: BatchRecord<EventRecord>) async throws -> BatchOutcome {
        try await store(batch, kind: "event", statements: Self.insertEvents) { row, event, now in
            try row.bind(event.id)
            try row.bind(batch.batchId)
            try row.bind(batch.identity.installationId)
            try row.bind(batch.identity.deviceId)
            try row.bind(event.sessionId)
            try row.bind(event.kind)
            try row.bind(event.name)
            try row.bind(event.timestampMs)
            try row.bind(event.crashId)
            try row.bind(now)
            try row.bindText(utf8: event.json)
        }
    }

    /// Stores a crash batch once: nothing if (app, batchId) is known, otherwise every report whose
    /// (app, crash id) is new. Returns after the commit.
    func storeCrashes(_ batch: BatchRecord<CrashRecord>) async throws -> BatchOutcome {
        try await store(batch, kind: "crash", statements: Self.insertCrashes) { row, crash, now in
            try row.bind(crash.crashId)
            try row.bind(batch.batchId)
            try row.bind(batch.identity.installationId)
            try row.bind(batch.identity.deviceId)
            try row.bind(crash.sessionId)
            try row.bind(crash.timestampMs)
            try row.bind(now)
            try row.bindText(utf8: crash.json)
        }
    }

    /// One group-commit job for a batch: the batch row (nothing more when it is known), then the
    /// items, each row starting with the app id and continuing with `bind`'s columns, then the
    /// stored count. Returns after the commit.
    private func store<Item: Sendable>(
        _ batch: BatchRecord<Item>, kind: String, statements: [Int: String],
        bind: @escaping @Sendable (inout SQLiteBindings, Item, Int64) throws -> Void
    ) async throws -> BatchOutcome {
        let now = clock.wallClockMilliseconds()
        return try await executor.commit { connection in
            guard try Self.insertBatch(batch, kind: kind, now: now, on: connection) else {
                return .duplicateBatch
            }
            var stored = 0
            try Self.insertRows(of: batch.items, statements: statements, on: connection) { row, item in
                try row.bind(batch.identity.appId)
                try bind(&row, item, now)
            } inserted: {
                stored += $0
            }
            try Self.finishBatch(batch, kind: kind, stored: stored, on: connection)
            return .stored(stored: stored, duplicates: batch.items.count - stored)
        }
    }

    /// The row counts of one multi-row `INSERT`: a batch is written with as few statements as these
    /// sizes allow (64 events: two), so the per-statement work (statement journal, reset, halt) is
    /// paid per chunk instead of per row; few distinct statements stay in the statement cache.
    private static let chunkSizes = [32, 16, 8, 4, 2, 1]

    /// `INSERT … VALUES (…), (…) … ON CONFLICT DO NOTHING` for each chunk size: a row whose unique
    /// key exists (stored earlier, or earlier in the same statement) is skipped, the others stored.
    private static func multiRowInsert(_ head: String, columns: Int) -> [Int: String] {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        return Dictionary(
            uniqueKeysWithValues: chunkSizes.map { size in
                (
                    size,
                    head + " VALUES " + Array(repeating: row, count: size).joined(separator: ", ")
                        + " ON CONFLICT DO NOTHING"
                )
            })
    }

    private static let insertEvents = multiRowInsert(
        """
        INSERT INTO ingest_events (app_id, event_id, batch_id, installation_id, device_id, session_id,
            kind, name, timestamp_ms, crash_id, received_at, body)
        """, columns: 12)

    private static let insertCrashes = multiRowInsert(
        """
        INSERT INTO ingest_crashes (app_id, crash_id, batch_id, installation_id, device_id, session_id,
            timestamp_ms, received_at, body)
        """, columns: 9)

    /// Inserts `items` in chunks (``chunkSizes``), binding each item's columns with `bind`, and
    /// reports each statement's inserted row count to `inserted`.
    private static func insertRows<Item>(
        of items: [Item], statements: [Int: String], on connection: SQLiteConnection,
        bind: (inout SQLiteBindings, Item) throws -> Void, inserted: (Int) -> Void
    ) throws {
        var offset = 0
        while offset < items.count {
            let remaining = items.count - offset
            let size = chunkSizes.first { $0 <= remaining } ?? 1
            let chunk = items[offset..<(offset + size)]
            try connection.execute(statements[size]!) { row in
                for item in chunk {
                    try bind(&row, item)
                }
            }
            inserted(connection.changes)
            offset += size
        }
    }

    /// Inserts the batch row; `false` when (app, kind, batchId) already exists.
    private static func insertBatch<Item>(
        _ batch: BatchRecord<Item>, kind: String, now: Int64, on connection: SQLiteConnection
    ) throws -> Bool {
        let identity = batch.identity
        try connection.execute(
            """
            INSERT INTO ingest_batches (app_id, kind, batch_id, connection_id, installation_id, device_id, user_id,
                app_version, build_number, sdk_version, platform, package_name, item_count, stored_count, received_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING
            """
        ) { row in
            try row.bind(identity.appId)
            try row.bind(kind)
            try row.bind(batch.batchId)
            try row.bind(batch.connectionId)
            try row.bind(identity.installationId)
            try row.bind(identity.deviceId)
            try row.bind(identity.userId)
            try row.bind(identity.appVersion)
            try row.bind(identity.buildNumber)
            try row.bind(identity.sdkVersion)
            try row.bind(identity.platform)
            try row.bind(identity.packageName)
            try row.bind(batch.items.count)
            try row.bind(now)
        }
        return connection.changes == 1
    }

    private static func finishBatch<Item>(
        _ batch: BatchRecord<Item>, kind: String, stored: Int, on connection: SQLiteConnection
    ) throws {
        try connection.execute(
            "UPDATE ingest_batches SET stored_count = ? WHERE app_id = ? AND kind = ? AND batch_id = ?"
        ) { row in
            try row.bind(stored)
            try row.bind(batch.identity.appId)
            try row.bind(kind)
            try row.bind(batch.batchId)
        }
    }

    // MARK: - Connection history

    /// Records a successful CLIENT_CONNECT (the identity it bound, from `remoteAddress`); returns
    /// after the commit.
    func recordConnect(_ identity: SessionIdentity, remoteAddress: String, at now: Int64) async throws {
        try await executor.commit { connection in
            try connection.execute(
                """
                INSERT INTO ingest_connections (connection_id, app_id, package_name, device_id, installation_id,
                    platform, sdk_version, app_version, build_number, remote_address, connected_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    identity.connectionId, identity.appId, identity.packageName, identity.deviceId,
                    identity.installationId, identity.platform, identity.sdkVersion, identity.appVersion,
                    identity.buildNumber, remoteAddress, now,
                ])
        }
    }

    /// Records an accepted heartbeat; returns after the commit.
    func recordHeartbeat(connectionId: String, at now: Int64) async throws {
        try await executor.commit { connection in
            try connection.execute(
                """
                UPDATE ingest_connections SET last_heartbeat_at = ?, heartbeat_count = heartbeat_count + 1
                WHERE connection_id = ?
                """,
                [now, connectionId])
        }
    }

    /// Records that a connection closed; returns after the commit.
    func recordClose(connectionId: String, at now: Int64) async throws {
        try await executor.commit { connection in
            try connection.execute(
                "UPDATE ingest_connections SET closed_at = ? WHERE connection_id = ? AND closed_at IS NULL",
                [now, connectionId])
        }
    }

    /// Marks every connection the history still shows as open as closed at `now` (at start-up: a
    /// previous process ended without recording its closes).
    func closeDanglingConnections(at now: Int64) async throws {
        try await executor.write { connection in
            try connection.execute("UPDATE ingest_connections SET closed_at = ? WHERE closed_at IS NULL", [now])
        }
    }

    // MARK: - Queries

    /// The newest `limit` events of `app`, newest first.
    func events(app: String, limit: Int) async throws -> [IngestedEvent] {
        try await executor.read { connection in
            try connection.query(
                """
                SELECT app_id, event_id, batch_id, installation_id, device_id, session_id, kind, name, timestamp_ms,
                    received_at, body
                FROM ingest_events WHERE app_id = ? ORDER BY seq DESC LIMIT ?
                """,
                [app, limit]
            ) { row in
                IngestedEvent(
                    appId: try row.column(0), eventId: try row.column(1), batchId: try row.column(2),
                    installationId: try row.column(3), deviceId: try row.column(4), sessionId: try row.column(5),
                    kind: try row.column(6), name: try row.column(7), timestampMs: try row.column(8),
                    receivedAtMs: try row.column(9), json: try row.column(10))
            }
        }
    }

    /// The newest `limit` crash reports of `app`, newest first.
    func crashes(app: String, limit: Int) async throws -> [IngestedCrash] {
        try await executor.read { connection in
            try connection.query(
                """
                SELECT app_id, crash_id, batch_id, installation_id, session_id, timestamp_ms, received_at, body
                FROM ingest_crashes WHERE app_id = ? ORDER BY seq DESC LIMIT ?
                """,
                [app, limit]
            ) { row in
                IngestedCrash(
                    appId: try row.column(0), crashId: try row.column(1), batchId: try row.column(2),
                    installationId: try row.column(3), sessionId: try row.column(4), timestampMs: try row.column(5),
                    receivedAtMs: try row.column(6), json: try row.column(7))
            }
        }
    }

    /// The connection history of `app`, oldest first.
    func connectionHistory(app: String) async throws -> [ConnectionHistoryEntry] {
        try await executor.read { connection in
            try connection.query(
                """
                SELECT connection_id, app_id, package_name, device_id, installation_id, platform, sdk_version,
                    remote_address, connected_at, last_heartbeat_at, heartbeat_count, closed_at
                FROM ingest_connections WHERE app_id = ? ORDER BY connected_at, connection_id
                """,
                [app]
            ) { row in
                ConnectionHistoryEntry(
                    connectionId: try row.column(0), appId: try row.column(1), packageName: try row.column(2),
                    deviceId: try row.column(3), installationId: try row.column(4), platform: try row.column(5),
                    sdkVersion: try row.column(6), remoteAddress: try row.column(7), connectedAtMs: try row.column(8),
                    lastHeartbeatAtMs: try row.column(9), heartbeatCount: try row.column(10),
                    closedAtMs: try row.column(11))
            }
        }
    }

    /// What the store holds, per app.
    func counts() async throws -> [String: IngestCounts] {
        try await executor.read { connection in
            var counts: [String: IngestCounts] = [:]
            let batches = try connection.query(
                "SELECT app_id, kind, count(*) FROM ingest_batches GROUP BY app_id, kind"
            ) { row in
                (
                    try row.column(0, as: String.self), try row.column(1, as: String.self),
                    try row.column(2, as: Int.self)
                )
            }
            for (app, kind, count) in batches {
                if kind == "event" {
                    counts[app, default: IngestCounts()].eventBatches = count
                } else {
                    counts[app, default: IngestCounts()].crashBatches = count
                }
            }
            let tables: [(String, WritableKeyPath<IngestCounts, Int>)] = [
                ("ingest_events", \.events), ("ingest_crashes", \.crashes), ("ingest_connections", \.connections),
            ]
            for (table, keyPath) in tables {
                let rows = try connection.query("SELECT app_id, count(*) FROM \(table) GROUP BY app_id") { row in
                    (try row.column(0, as: String.self), try row.column(1, as: Int.self))
                }
                for (app, count) in rows {
                    counts[app, default: IngestCounts()][keyPath: keyPath] = count
                }
            }
            return counts
        }
    }
}
