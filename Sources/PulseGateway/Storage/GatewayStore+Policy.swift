import PulseStorage

extension GatewayStore {
    /// Stores (replaces) the cached policy snapshot of `app`: its canonical JSON and revision.
    func savePolicy(app: String, revision: Int64, json: [UInt8], now: Int64) async throws {
        try await executor.commit { connection in
            try connection.execute(
                """
                INSERT INTO policy_cache (app, revision, snapshot, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT(app) DO UPDATE SET revision = excluded.revision, snapshot = excluded.snapshot,
                updated_at = excluded.updated_at
                """, [app, revision, json, now])
        }
    }

    /// Every cached policy snapshot: (app, canonical JSON).
    func cachedPolicies() async throws -> [(String, [UInt8])] {
        try await executor.read { connection in
            try connection.query("SELECT app, snapshot FROM policy_cache ORDER BY app") { row in
                (try row.column(0, as: String.self), try row.column(1, as: [UInt8].self))
            }
        }
    }
}
