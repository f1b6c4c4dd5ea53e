import PulseStorage

extension GatewayStore {
    /// Outbox rows per App ID, read on the forwarder's read-only connection (`/metrics`).
    func outboxRowsByApp() async throws -> [String: Int] {
        try await reader.read { connection in
            var rows: [String: Int] = [:]
            _ = try connection.query("SELECT app, count(*) FROM outbox GROUP BY app") { row in
                rows[try row.column(0, as: String.self)] = try row.column(1, as: Int.self)
            }
            return rows
        }
    }
}
