import PulsePostgres

/// `pulsegate outbox --store URL`: the same views and requeue as on SQLite, fleet-wide.
extension PostgresGatewayStore: GatewayStoring {
    /// Depth, age and dead letters per app, sorted by app.
    package func appSummaries() async throws -> [GatewayStore.AppSummary] {
        try await reader.run { connection throws(PostgresError) in
            var summaries: [String: GatewayStore.AppSummary] = [:]
            for row in try connection.execute(
                """
                SELECT app, count(*), sum(record_count)::bigint, sum(payload_bytes)::bigint, min(created_at)
                FROM outbox GROUP BY app
                """
            ).rows {
                let app = try row.string(0)
                summaries[app] = GatewayStore.AppSummary(
                    app: app, batches: try row.int(1), records: try row.int(2), bytes: try row.int(3),
                    oldestCreatedAt: try row.int64(4), deadLetters: 0)
            }
            for row in try connection.execute("SELECT app, count(*) FROM dead_letter GROUP BY app").rows {
                let app = try row.string(0)
                summaries[
                    app,
                    default: GatewayStore.AppSummary(
                        app: app, batches: 0, records: 0, bytes: 0, oldestCreatedAt: 0, deadLetters: 0)
                ].deadLetters = try row.int(1)
            }
            return summaries.values.sorted { $0.app < $1.app }
        }
    }

    /// Dead letters, oldest first, at most `limit`.
    package func deadLetters(limit: Int = 100) async throws -> [GatewayStore.DeadLetter] {
        try await reader.run { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT seq, app, identity_key, kind, pulse_batch_id, http_batch_id, record_count, attempts,
                    failed_at, code, message, request_id
                FROM dead_letter ORDER BY seq LIMIT $1
                """, [.int(Int64(limit))]
            ).rows.map { (row) throws(PostgresError) in
                GatewayStore.DeadLetter(
                    seq: try row.int64(0), app: try row.string(1), identityKey: try row.string(2),
                    kind: OutboxBatchKind(rawValue: try row.int(3)) ?? .events, pulseBatchID: try row.string(4),
                    httpBatchID: try row.string(5), recordCount: try row.int(6), attempts: try row.int(7),
                    failedAt: try row.int64(8), code: try row.int(9), message: try row.string(10),
                    requestID: row.optionalString(11))
            }
        }
    }

    /// Moves dead letters back into the outbox (all, or those with the given sequence numbers),
    /// due at `now`, attempts reset; they keep their sequence numbers (their FIFO place).
    package func requeue(seqs: [Int64]? = nil, now: Int64) async throws -> Int {
        let filter = seqs == nil ? "" : " WHERE seq = ANY($2)"
        let parameters: [PostgresValue] = [.int(now)] + (seqs.map { [.intArray($0)] } ?? [])
        let result = try await writer.commit([
            PostgresStatement(
                """
                WITH moved AS (DELETE FROM dead_letter\(filter) RETURNING *)
                INSERT INTO outbox(seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload,
                    compression, record_count, fallback, http_batch_id, attempts, next_attempt_at, created_at,
                    payload_bytes, request_id)
                SELECT seq, app, identity_key, identity_id, kind, priority, pulse_batch_id, payload, compression,
                    record_count, fallback, http_batch_id, 0, $1, created_at, payload_bytes, request_id FROM moved
                RETURNING app, payload_bytes, \(Self.transactionID)
                """, parameters)
        ])
        let rows = result.first?.rows ?? []
        try outboxChanged(rows, sign: 1)
        return rows.count
    }
}
