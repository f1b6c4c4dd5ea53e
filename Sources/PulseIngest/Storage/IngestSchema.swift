import PulseStorage

/// The append-only schema migrations of the ingest database (`ingest.sqlite` in the data directory).
///
/// - `ingest_batches`: one row per accepted batch, keyed by (app, kind, batchId) so a replayed batch is
///   recognised and stores nothing.
/// - `ingest_events`: one row per event, unique by (app, event id) and, for `Crash` events carrying an
///   `app.crash.id` attribute, by (app, crash id).
/// - `ingest_crashes`: one row per crash report, unique by (app, crash id) (the `app.crash.id`).
/// - `ingest_connections`: durable connection history (connect, heartbeats, close).
enum IngestSchema {
    static var migrator: Migrator {
        var migrator = Migrator()
        migrator.append(
            "001_ingest_batches",
            sql: """
                CREATE TABLE ingest_batches (
                    app_id TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('event', 'crash')),
                    batch_id TEXT NOT NULL,
                    connection_id TEXT,
                    installation_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    user_id TEXT,
                    app_version TEXT,
                    build_number INTEGER NOT NULL,
                    sdk_version TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    package_name TEXT,
                    item_count INTEGER NOT NULL,
                    stored_count INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    PRIMARY KEY (app_id, kind, batch_id)
                ) WITHOUT ROWID
                """)
        migrator.append(
            "002_ingest_events",
            sql: """
                CREATE TABLE ingest_events (
                    seq INTEGER PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    batch_id TEXT NOT NULL,
                    installation_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    name TEXT NOT NULL,
                    timestamp_ms INTEGER NOT NULL,
                    crash_id TEXT,
                    received_at INTEGER NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE UNIQUE INDEX ingest_events_by_id ON ingest_events(app_id, event_id);
                CREATE UNIQUE INDEX ingest_events_by_crash ON ingest_events(app_id, crash_id)
                    WHERE crash_id IS NOT NULL;
                CREATE INDEX ingest_events_by_app ON ingest_events(app_id, seq)
                """)
        migrator.append(
            "003_ingest_crashes",
            sql: """
                CREATE TABLE ingest_crashes (
                    seq INTEGER PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    crash_id TEXT NOT NULL,
                    batch_id TEXT NOT NULL,
                    installation_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    session_id TEXT,
                    timestamp_ms INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE UNIQUE INDEX ingest_crashes_by_id ON ingest_crashes(app_id, crash_id);
                CREATE INDEX ingest_crashes_by_app ON ingest_crashes(app_id, seq)
                """)
        migrator.append(
            "004_ingest_connections",
            sql: """
                CREATE TABLE ingest_connections (
                    connection_id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    package_name TEXT,
                    device_id TEXT NOT NULL,
                    installation_id TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    sdk_version TEXT NOT NULL,
                    app_version TEXT,
                    build_number INTEGER NOT NULL,
                    remote_address TEXT NOT NULL,
                    connected_at INTEGER NOT NULL,
                    last_heartbeat_at INTEGER,
                    heartbeat_count INTEGER NOT NULL DEFAULT 0,
                    closed_at INTEGER
                ) WITHOUT ROWID;
                CREATE INDEX ingest_connections_by_app ON ingest_connections(app_id, connected_at)
                """)
        return migrator
    }
}
