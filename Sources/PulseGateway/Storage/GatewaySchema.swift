import PulseStorage

/// The gateway's SQLite schema, applied with ``PulseStorage/Migrator``.
///
/// - `dedup`: one row per (app, HTTP batch id, decoded body's SHA-256) with first sight and
///   expiry; replays are counted on the row (`duplicates`). A batch id reused with another body
///   is stored as its own batch: its row has `conflicts` 1 (migration `005`; before it the key was
///   (app, batch id), a conflicting body was dropped and counted on the first row).
/// - `outbox`: one row per Pulse batch, payload already encoded (plaintext JSON) with the
///   compression chosen when the row was created. `seq` (AUTOINCREMENT, never reused) is the FIFO
///   order; the forwarder sends per identity in `(priority, seq)` order, crash batches
///   (`priority` 0) first.
/// - `dead_letter`: outbox rows the upstream refused for good (400/403/404), with the code and
///   message, kept until requeued (`pulsegate outbox requeue`).
/// - `policy_cache`: the last policy snapshot pulled from the upstream per app (canonical JSON),
///   so a restarted gateway serves `GET /v1/policy` and `Apsio-Policy-Revision` at once.
/// - `diagnostics_device`, `diagnostics_received`: per (app, installation) delivery state and the received
///   batch sequence numbers as ranges (`docs/diagnostics.md`).
///
/// Migration `007` adds `request_id` to `outbox` and `dead_letter`: the `X-Request-Id` of the
/// HTTP request that stored the row (``RequestID``), so a forwarding failure logged for a row can
/// be traced back to the request; older rows have none (NULL).
///
/// Migration `006` stores each outbox and dead-letter row in wire form: `payload` is exactly the
/// msgtrans frame payload and `compression` its frame compression byte (``StoredPayload``), sent
/// as stored. Rows stored zstd-compressed by `004` are already one zstd frame: they keep their
/// bytes and are labelled zstd; plain ones are labelled none (a valid frame at any size). It also
/// stores each identity once: `identities` (`identity_key` unique, `app`, the CONNECT payload
/// `connect`); rows refer to it by `identity_id`, and the per-row `identity` copy is dropped.
/// Identities no row refers to any more are pruned with expired dedup keys.
///
/// Migration `004` adds `payload_encoding` and `payload_bytes` to both tables: payloads are
/// stored zstd-compressed (`payload_encoding` 1) when that makes them smaller, so a commit writes
/// about a fifth of the bytes; `payload_bytes` keeps the plaintext length, which is what the
/// outbox byte cap, `/metrics` and `pulsegate outbox` count. Rows written before it are plain (0).
enum GatewaySchema {
    /// The columns `dedup` has had since `001` (`005` rebuilt it with another key).
    private static let dedupColumns = """
        app TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        body_hash BLOB NOT NULL,
        first_seen INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        sent_at INTEGER,
        duplicates INTEGER NOT NULL DEFAULT 0,
        conflicts INTEGER NOT NULL DEFAULT 0,
        """

    /// The batch columns `001` created `outbox` and `dead_letter` with, after `seq`: a dead letter
    /// is an outbox row the upstream refused, with its own attempt and failure columns.
    private static let batchColumns = """
        app TEXT NOT NULL,
        identity_key TEXT NOT NULL,
        identity BLOB NOT NULL,
        kind INTEGER NOT NULL,
        priority INTEGER NOT NULL,
        pulse_batch_id TEXT NOT NULL,
        payload BLOB NOT NULL,
        compression INTEGER NOT NULL,
        record_count INTEGER NOT NULL,
        fallback BLOB,
        http_batch_id TEXT NOT NULL,
        """

    static var migrator: Migrator {
        var migrator = Migrator()
        migrator.append(
            "001_gateway_dedup_outbox",
            sql: """
                CREATE TABLE dedup (
                    \(dedupColumns)
                    PRIMARY KEY (app, batch_id)
                ) WITHOUT ROWID;
                CREATE INDEX dedup_by_expiry ON dedup(expires_at);
                CREATE TABLE outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    \(batchColumns)
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    last_error TEXT
                );
                CREATE INDEX outbox_by_identity ON outbox(identity_key, priority, seq);
                CREATE TABLE dead_letter (
                    seq INTEGER PRIMARY KEY,
                    \(batchColumns)
                    attempts INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    failed_at INTEGER NOT NULL,
                    code INTEGER NOT NULL,
                    message TEXT NOT NULL
                );
                """)
        migrator.append(
            "002_gateway_policy_cache",
            sql: """
                CREATE TABLE policy_cache (
                    app TEXT PRIMARY KEY,
                    revision INTEGER NOT NULL,
                    snapshot BLOB NOT NULL,
                    updated_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        migrator.append(
            "003_gateway_diagnostics",
            sql: """
                CREATE TABLE diagnostics_device (
                    app TEXT NOT NULL,
                    installation_id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    batches_received INTEGER NOT NULL DEFAULT 0,
                    highest_sequence INTEGER NOT NULL DEFAULT 0,
                    latest_sequence INTEGER NOT NULL DEFAULT -1,
                    latest BLOB,
                    attempted INTEGER,
                    sent_ok INTEGER,
                    sent_with_errors INTEGER,
                    PRIMARY KEY (app, installation_id)
                ) WITHOUT ROWID;
                CREATE TABLE diagnostics_received (
                    app TEXT NOT NULL,
                    installation_id TEXT NOT NULL,
                    low INTEGER NOT NULL,
                    high INTEGER NOT NULL,
                    first_at INTEGER NOT NULL,
                    PRIMARY KEY (app, installation_id, low)
                ) WITHOUT ROWID;
                """)
        migrator.append(
            "004_outbox_stored_encoding",
            sql: """
                ALTER TABLE outbox ADD COLUMN payload_encoding INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE outbox ADD COLUMN payload_bytes INTEGER NOT NULL DEFAULT 0;
                UPDATE outbox SET payload_bytes = length(payload);
                ALTER TABLE dead_letter ADD COLUMN payload_encoding INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE dead_letter ADD COLUMN payload_bytes INTEGER NOT NULL DEFAULT 0;
                UPDATE dead_letter SET payload_bytes = length(payload);
                """)
        migrator.append(
            "005_dedup_keyed_by_body_hash",
            sql: """
                CREATE TABLE dedup_by_body (
                    \(dedupColumns)
                    PRIMARY KEY (app, batch_id, body_hash)
                ) WITHOUT ROWID;
                INSERT INTO dedup_by_body(app, batch_id, body_hash, first_seen, expires_at, sent_at, duplicates,
                    conflicts)
                SELECT app, batch_id, body_hash, first_seen, expires_at, sent_at, duplicates, conflicts FROM dedup;
                DROP TABLE dedup;
                ALTER TABLE dedup_by_body RENAME TO dedup;
                CREATE INDEX dedup_by_expiry ON dedup(expires_at);
                """)
        migrator.append(
            "006_outbox_wire_form_and_identities",
            sql: """
                CREATE TABLE identities (
                    id INTEGER PRIMARY KEY,
                    identity_key TEXT NOT NULL UNIQUE,
                    app TEXT NOT NULL,
                    connect BLOB NOT NULL
                );
                INSERT OR IGNORE INTO identities(identity_key, app, connect)
                    SELECT identity_key, app, identity FROM outbox ORDER BY seq;
                INSERT OR IGNORE INTO identities(identity_key, app, connect)
                    SELECT identity_key, app, identity FROM dead_letter ORDER BY seq;
                ALTER TABLE outbox ADD COLUMN identity_id INTEGER NOT NULL DEFAULT 0;
                UPDATE outbox SET identity_id = (SELECT id FROM identities WHERE identity_key = outbox.identity_key),
                    compression = CASE payload_encoding WHEN 1 THEN 1 ELSE 0 END;
                DROP INDEX outbox_by_identity;
                CREATE INDEX outbox_by_identity ON outbox(identity_id, priority, seq);
                ALTER TABLE outbox DROP COLUMN identity;
                ALTER TABLE outbox DROP COLUMN payload_encoding;
                ALTER TABLE dead_letter ADD COLUMN identity_id INTEGER NOT NULL DEFAULT 0;
                UPDATE dead_letter SET identity_id =
                        (SELECT id FROM identities WHERE identity_key = dead_letter.identity_key),
                    compression = CASE payload_encoding WHEN 1 THEN 1 ELSE 0 END;
                ALTER TABLE dead_letter DROP COLUMN identity;
                ALTER TABLE dead_letter DROP COLUMN payload_encoding;
                """)
        migrator.append(
            "007_outbox_request_id",
            sql: """
                ALTER TABLE outbox ADD COLUMN request_id TEXT;
                ALTER TABLE dead_letter ADD COLUMN request_id TEXT;
                """)
        return migrator
    }
}
