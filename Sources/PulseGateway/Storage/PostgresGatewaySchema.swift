import PulsePostgres

/// The gateway's PostgreSQL schema (fleet mode), applied with ``PulsePostgres/PostgresMigrator``
/// under its advisory lock, so gateways starting together apply it once. Its own append-only
/// list, independent of the SQLite list in ``GatewaySchema``; the tables mirror SQLite's after
/// its migration `007` (wire-form payloads, identities stored once, request ids); `002` is SQLite's
/// `003` (the diagnostics ledger). A later SQLite migration that changes these tables needs its
/// twin appended here.
///
/// - `dedup`, `identities`, `outbox`, `dead_letter`, `policy_cache`: as in ``GatewaySchema``,
///   with `bigint` and `bytea` columns and `bigserial` ids (`outbox.seq` is the FIFO order).
/// - `identity_leases`: which node sends an identity's rows now (`owner`, a per-claim `token`),
///   until `expires_at` (the database's clock, so node clocks do not matter).
/// - `node_probes`: one row per node, written by the readiness probe.
/// - `pulsegate_enqueue(...)`: inserts outbox rows (one per array element), creating identities
///   on first sight; `pulsegate_intake(...)`: the whole intake decision (duplicate, conflict,
///   accepted) and its rows in one call, so a group commit is one statement per request.
///
/// Locks: the intake takes a transaction-scoped advisory lock on (app, batch id), so two nodes
/// receiving the same batch id decide one after the other (the second sees a duplicate), and a
/// shared advisory lock that identity pruning takes exclusively (an identity is never deleted
/// between being looked up and being referenced by a new row).
enum PostgresGatewaySchema {
    /// The shared/exclusive advisory lock between enqueueing and identity pruning.
    static let identityLock: Int64 = 0x5047_6964
    /// The advisory lock of the node that prunes expired keys now.
    static let pruneLock: Int64 = 0x5047_7072
    /// The namespace (first key) of the per-(app, batch id) intake locks.
    static let intakeLockSpace: Int32 = 0x5047
    /// The namespace of the per-(app, installation) diagnostics ledger locks.
    static let diagnosticsLockSpace: Int32 = 0x5044

    static var migrator: PostgresMigrator {
        var migrator = PostgresMigrator()
        migrator.append(
            "001_gateway_fleet_store",
            sql: """
                CREATE TABLE dedup (
                    app text NOT NULL, batch_id text NOT NULL, body_hash bytea NOT NULL,
                    first_seen bigint NOT NULL, expires_at bigint NOT NULL, sent_at bigint,
                    duplicates bigint NOT NULL DEFAULT 0, conflicts bigint NOT NULL DEFAULT 0,
                    PRIMARY KEY (app, batch_id, body_hash));
                CREATE INDEX dedup_by_expiry ON dedup(expires_at);
                CREATE TABLE identities (
                    id bigserial PRIMARY KEY, identity_key text NOT NULL UNIQUE, app text NOT NULL,
                    connect bytea NOT NULL);
                CREATE TABLE outbox (
                    seq bigserial PRIMARY KEY, app text NOT NULL, identity_key text NOT NULL,
                    identity_id bigint NOT NULL, kind bigint NOT NULL, priority bigint NOT NULL,
                    pulse_batch_id text NOT NULL, payload bytea NOT NULL, compression bigint NOT NULL,
                    record_count bigint NOT NULL, fallback bytea, http_batch_id text NOT NULL,
                    attempts bigint NOT NULL DEFAULT 0, next_attempt_at bigint NOT NULL, created_at bigint NOT NULL,
                    last_error text, payload_bytes bigint NOT NULL, request_id text);
                CREATE INDEX outbox_by_identity ON outbox(identity_id, priority, seq);
                CREATE TABLE dead_letter (
                    seq bigint PRIMARY KEY, app text NOT NULL, identity_key text NOT NULL,
                    identity_id bigint NOT NULL, kind bigint NOT NULL, priority bigint NOT NULL,
                    pulse_batch_id text NOT NULL, payload bytea NOT NULL, compression bigint NOT NULL,
                    record_count bigint NOT NULL, fallback bytea, http_batch_id text NOT NULL,
                    attempts bigint NOT NULL, created_at bigint NOT NULL, failed_at bigint NOT NULL,
                    code bigint NOT NULL, message text NOT NULL, payload_bytes bigint NOT NULL, request_id text);
                CREATE INDEX dead_letter_by_identity ON dead_letter(identity_id);
                CREATE TABLE policy_cache (
                    app text PRIMARY KEY, revision bigint NOT NULL, snapshot bytea NOT NULL,
                    updated_at bigint NOT NULL);
                CREATE TABLE identity_leases (
                    identity_key text PRIMARY KEY, owner text NOT NULL, token bigint NOT NULL,
                    expires_at timestamptz NOT NULL);
                CREATE TABLE node_probes (node text PRIMARY KEY, probed_at timestamptz NOT NULL);

                CREATE FUNCTION pulsegate_enqueue(
                    p_app text, p_http_batch text, p_now bigint, p_priority bigint, p_keys text[],
                    p_connects bytea[], p_kinds bigint[], p_priorities bigint[], p_pulse_ids text[],
                    p_payloads bytea[], p_compressions bigint[], p_counts bigint[], p_fallbacks bytea[],
                    p_plain bigint[], p_request text) RETURNS bigint[] LANGUAGE plpgsql AS $$
                DECLARE
                    ident bigint;
                    s bigint;
                    seqs bigint[] := '{}';
                BEGIN
                    PERFORM pg_advisory_xact_lock_shared(\(identityLock));
                    FOR i IN 1 .. coalesce(array_length(p_keys, 1), 0) LOOP
                        SELECT id INTO ident FROM identities WHERE identity_key = p_keys[i];
                        IF ident IS NULL THEN
                            INSERT INTO identities(identity_key, app, connect) VALUES (p_keys[i], p_app, p_connects[i])
                                ON CONFLICT (identity_key) DO UPDATE SET app = excluded.app RETURNING id INTO ident;
                        END IF;
                        INSERT INTO outbox(app, identity_key, identity_id, kind, priority, pulse_batch_id, payload,
                            compression, record_count, fallback, http_batch_id, next_attempt_at, created_at,
                            payload_bytes, request_id)
                        VALUES (p_app, p_keys[i], ident, p_kinds[i], coalesce(p_priority, p_priorities[i]),
                            p_pulse_ids[i], p_payloads[i], p_compressions[i], p_counts[i], p_fallbacks[i],
                            p_http_batch, p_now, p_now, p_plain[i], p_request)
                        RETURNING seq INTO s;
                        seqs := seqs || s;
                    END LOOP;
                    RETURN seqs;
                END $$;

                CREATE FUNCTION pulsegate_intake(
                    p_app text, p_batch text, p_hash bytea, p_now bigint, p_retention bigint, p_sent bigint,
                    p_conflict boolean, p_keys text[], p_connects bytea[], p_kinds bigint[], p_priorities bigint[],
                    p_pulse_ids text[], p_payloads bytea[], p_compressions bigint[], p_counts bigint[],
                    p_fallbacks bytea[], p_plain bigint[], p_request text, OUT outcome bigint, OUT seqs bigint[])
                LANGUAGE plpgsql AS $$
                BEGIN
                    seqs := '{}';
                    PERFORM pg_advisory_xact_lock(\(intakeLockSpace), hashtext(p_app || chr(1) || p_batch));
                    DELETE FROM dedup WHERE app = p_app AND batch_id = p_batch AND body_hash = p_hash
                        AND expires_at <= p_now;
                    UPDATE dedup SET duplicates = duplicates + 1
                        WHERE app = p_app AND batch_id = p_batch AND body_hash = p_hash;
                    IF FOUND THEN
                        outcome := 1;
                        RETURN;
                    END IF;
                    IF NOT p_conflict AND EXISTS (SELECT 1 FROM dedup
                            WHERE app = p_app AND batch_id = p_batch AND expires_at > p_now) THEN
                        outcome := 2;
                        RETURN;
                    END IF;
                    INSERT INTO dedup(app, batch_id, body_hash, first_seen, expires_at, sent_at, conflicts)
                        VALUES (p_app, p_batch, p_hash, p_now, p_now + p_retention, p_sent,
                            CASE WHEN p_conflict THEN 1 ELSE 0 END);
                    seqs := pulsegate_enqueue(p_app, p_batch, p_now, NULL, p_keys, p_connects, p_kinds, p_priorities,
                        p_pulse_ids, p_payloads, p_compressions, p_counts, p_fallbacks, p_plain, p_request);
                    outcome := 0;
                END $$;
                """)
        // SQLite's 003 (the diagnostics ledger) in PostgreSQL: the same tables and, in
        // `pulsegate_diagnostics_record`, the same steps as `DiagnosticsLedger.record`, run inside the
        // intake's transaction for a new batch only. A per-(app, installation) advisory lock orders
        // two nodes recording batches of one device.
        migrator.append(
            "002_gateway_diagnostics",
            sql: """
                CREATE TABLE diagnostics_device (
                    app text NOT NULL, installation_id text NOT NULL, device_id text NOT NULL,
                    first_seen bigint NOT NULL, last_seen bigint NOT NULL,
                    batches_received bigint NOT NULL DEFAULT 0, highest_sequence bigint NOT NULL DEFAULT 0,
                    latest_sequence bigint NOT NULL DEFAULT -1, latest bytea, attempted bigint, sent_ok bigint,
                    sent_with_errors bigint, PRIMARY KEY (app, installation_id));
                CREATE TABLE diagnostics_received (
                    app text NOT NULL, installation_id text NOT NULL, low bigint NOT NULL, high bigint NOT NULL,
                    first_at bigint NOT NULL, PRIMARY KEY (app, installation_id, low));

                CREATE FUNCTION pulsegate_diagnostics_record(
                    p_app text, p_installation text, p_device text, p_now bigint, p_sequence bigint,
                    p_record bytea, p_attempted bigint, p_sent_ok bigint, p_sent_errors bigint)
                RETURNS void LANGUAGE plpgsql AS $$
                DECLARE
                    stored_highest bigint;
                    stored_latest bigint;
                    seq bigint := p_sequence;
                    counts boolean := true;
                    left_low bigint;
                    left_first bigint;
                    right_high bigint;
                    right_first bigint;
                BEGIN
                    PERFORM pg_advisory_xact_lock(\(diagnosticsLockSpace), hashtext(p_app || chr(1) || p_installation));
                    SELECT highest_sequence, latest_sequence INTO stored_highest, stored_latest
                        FROM diagnostics_device WHERE app = p_app AND installation_id = p_installation;
                    IF NOT FOUND THEN
                        INSERT INTO diagnostics_device(app, installation_id, device_id, first_seen, last_seen)
                            VALUES (p_app, p_installation, p_device, p_now, p_now);
                        stored_highest := 0;
                        stored_latest := -1;
                    END IF;
                    IF seq IS NOT NULL AND seq > stored_highest + \(DiagnosticsLedger.maximumSequenceJump) THEN
                        seq := NULL;
                    END IF;
                    IF seq IS NOT NULL THEN
                        IF EXISTS (SELECT 1 FROM diagnostics_received WHERE app = p_app
                                AND installation_id = p_installation AND low <= seq AND high >= seq) THEN
                            counts := false;
                        ELSE
                            SELECT low, first_at INTO left_low, left_first FROM diagnostics_received
                                WHERE app = p_app AND installation_id = p_installation AND high = seq - 1;
                            SELECT high, first_at INTO right_high, right_first FROM diagnostics_received
                                WHERE app = p_app AND installation_id = p_installation AND low = seq + 1;
                            DELETE FROM diagnostics_received WHERE app = p_app AND installation_id = p_installation
                                AND (low = left_low OR low = seq + 1);
                            INSERT INTO diagnostics_received(app, installation_id, low, high, first_at)
                                VALUES (p_app, p_installation, coalesce(left_low, seq), coalesce(right_high, seq),
                                    least(p_now, coalesce(left_first, p_now), coalesce(right_first, p_now)));
                        END IF;
                    END IF;
                    UPDATE diagnostics_device SET last_seen = greatest(last_seen, p_now), device_id = p_device,
                        batches_received = batches_received + CASE WHEN counts THEN 1 ELSE 0 END,
                        highest_sequence = greatest(highest_sequence, coalesce(seq, 0))
                        WHERE app = p_app AND installation_id = p_installation;
                    IF p_record IS NOT NULL AND counts AND coalesce(seq, stored_latest) >= stored_latest THEN
                        UPDATE diagnostics_device SET latest = p_record, latest_sequence = coalesce(seq, stored_latest),
                            attempted = p_attempted, sent_ok = p_sent_ok, sent_with_errors = p_sent_errors
                            WHERE app = p_app AND installation_id = p_installation;
                    END IF;
                END $$;
                """)
        return migrator
    }
}
