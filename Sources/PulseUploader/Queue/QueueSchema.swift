import PulseStorage

/// The on-disk queue's schema, applied by ``Migrator`` (append-only).
///
/// - `record`: encoded records waiting to be sealed, in arrival order.
/// - `batch`: sealed, immutable batches (id, compressed body, encoding) and their delivery state.
/// - `resource`: the resource attribute sets records were recorded under.
/// - `setting`: consent, kill switch, lifecycle, identity, holds and the attempt window (shared by every
///   process that opens the queue).
/// - `drop_count`, `error_log`: diagnostics.
/// - `diagnostics_state`, `diagnostics_error`, `call_log`: the diagnostics counters, the batch sequence
///   counter, the latest upload errors and the call log (see `docs/diagnostics.md`).
/// - `endpoint_state`: the backoff of each gateway endpoint (consecutive connection failures, 5xx and 429
///   without `Retry-After`, and until when the endpoint is held), so it survives restarts.
/// - `batch.lease_ms`, `batch.transfer`: the length of the batch's current lease and whether an
///   out-of-process transfer holds it (``Uploader/claimForTransfer(route:maximum:leaseMilliseconds:)``).
/// - `queue_total`, `pending_group`: running totals kept by triggers, so caps and seal triggers cost one
///   indexed read instead of a scan.
enum QueueSchema {
    static var migrator: Migrator {
        var migrator = Migrator()
        migrator.append("001_uploader_queue", sql: version1)
        migrator.append("002_uploader_diagnostics", sql: version2)
        migrator.append("003_uploader_endpoint_backoff", sql: version3)
        migrator.append("004_uploader_transfer_lease", sql: version4)
        return migrator
    }

    private static let version1 = """
        CREATE TABLE resource (
            id INTEGER PRIMARY KEY,
            fingerprint TEXT NOT NULL UNIQUE,
            attributes BLOB NOT NULL
        );
        CREATE TABLE record (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            signal INTEGER NOT NULL,
            class INTEGER NOT NULL,
            resource_id INTEGER NOT NULL REFERENCES resource(id),
            created_ms INTEGER NOT NULL,
            record_id TEXT NOT NULL,
            crash_id TEXT,
            size INTEGER NOT NULL,
            fragment BLOB NOT NULL
        );
        CREATE INDEX record_by_group ON record(signal, class, id);
        CREATE INDEX record_by_class ON record(class, id);
        CREATE TABLE batch (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            batch_id TEXT NOT NULL UNIQUE,
            signal INTEGER NOT NULL,
            class INTEGER NOT NULL,
            background INTEGER NOT NULL,
            sealed_ms INTEGER NOT NULL,
            oldest_ms INTEGER NOT NULL,
            record_count INTEGER NOT NULL,
            raw_bytes INTEGER NOT NULL,
            encoding TEXT NOT NULL,
            body BLOB NOT NULL,
            body_bytes INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_ms INTEGER NOT NULL,
            lease_until_ms INTEGER NOT NULL DEFAULT 0,
            last_attempt_ms INTEGER,
            last_status INTEGER,
            last_error TEXT
        );
        CREATE INDEX batch_by_due ON batch(next_attempt_ms, seq);
        CREATE INDEX batch_by_class ON batch(class, seq);
        CREATE TABLE setting (
            key TEXT PRIMARY KEY,
            value
        ) WITHOUT ROWID;
        CREATE TABLE drop_count (
            reason TEXT PRIMARY KEY,
            records INTEGER NOT NULL DEFAULT 0,
            batches INTEGER NOT NULL DEFAULT 0,
            bytes INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE TABLE error_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at_ms INTEGER NOT NULL,
            batch_id TEXT,
            status INTEGER,
            message TEXT NOT NULL
        );
        CREATE TABLE queue_total (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            records INTEGER NOT NULL,
            bytes INTEGER NOT NULL
        );
        INSERT INTO queue_total(id, records, bytes) VALUES (1, 0, 0);
        CREATE TABLE pending_group (
            signal INTEGER NOT NULL,
            class INTEGER NOT NULL,
            records INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            PRIMARY KEY (signal, class)
        ) WITHOUT ROWID;
        CREATE TRIGGER record_added AFTER INSERT ON record BEGIN
            UPDATE queue_total SET records = records + 1, bytes = bytes + NEW.size WHERE id = 1;
            INSERT INTO pending_group(signal, class, records, bytes) VALUES (NEW.signal, NEW.class, 1, NEW.size)
                ON CONFLICT(signal, class) DO UPDATE SET records = records + 1, bytes = bytes + NEW.size;
        END;
        CREATE TRIGGER record_removed AFTER DELETE ON record BEGIN
            UPDATE queue_total SET records = records - 1, bytes = bytes - OLD.size WHERE id = 1;
            UPDATE pending_group SET records = records - 1, bytes = bytes - OLD.size
                WHERE signal = OLD.signal AND class = OLD.class;
        END;
        CREATE TRIGGER batch_added AFTER INSERT ON batch BEGIN
            UPDATE queue_total SET records = records + NEW.record_count, bytes = bytes + NEW.body_bytes WHERE id = 1;
        END;
        CREATE TRIGGER batch_removed AFTER DELETE ON batch BEGIN
            UPDATE queue_total SET records = records - OLD.record_count, bytes = bytes - OLD.body_bytes WHERE id = 1;
        END;
        """

    /// Diagnostics: the per-installation batch sequence (stored with every sealed batch), cumulative delivery
    /// counters, the window of the latest errors and the call log.
    private static let version2 = """
        ALTER TABLE batch ADD COLUMN sequence INTEGER;
        CREATE TABLE diagnostics_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            started_ms INTEGER NOT NULL,
            last_sequence INTEGER NOT NULL,
            attempted INTEGER NOT NULL,
            sent_ok INTEGER NOT NULL,
            with_errors INTEGER NOT NULL,
            errors_total INTEGER NOT NULL
        );
        INSERT INTO diagnostics_state(id, started_ms, last_sequence, attempted, sent_ok, with_errors, errors_total)
            VALUES (1, 0, 0, 0, 0, 0, 0);
        CREATE TABLE diagnostics_error (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at_ms INTEGER NOT NULL,
            code INTEGER NOT NULL,
            domain TEXT NOT NULL,
            description TEXT NOT NULL,
            batch_number INTEGER NOT NULL
        );
        CREATE TABLE call_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at_ms INTEGER NOT NULL,
            call TEXT NOT NULL,
            outcome TEXT NOT NULL,
            stack TEXT
        );
        """

    /// Per-endpoint backoff: a failure that is the endpoint's (no answer, 408, 429 or 5xx) holds every batch
    /// for that endpoint, so batches keep their queue order through an outage.
    private static let version3 = """
        CREATE TABLE endpoint_state (
            endpoint TEXT PRIMARY KEY,
            failures INTEGER NOT NULL,
            hold_until_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// Leases for out-of-process transfers: a lease remembers its length (a transfer lease may be longer
    /// than the policy's, and must not then look like a leftover of a backward clock step) and whether an
    /// out-of-process transfer holds it (shown by `status`). A claim is identified by the batch id and the
    /// attempt number it took, so no lease id is stored.
    private static let version4 = """
        ALTER TABLE batch ADD COLUMN lease_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE batch ADD COLUMN transfer INTEGER NOT NULL DEFAULT 0;
        """
}
