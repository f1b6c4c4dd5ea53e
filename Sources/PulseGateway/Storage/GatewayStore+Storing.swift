import PulseStorage

/// The SQLite store as a ``GatewayStoring``: one node owns its data directory, so every lease
/// is held at once and never lost.
extension GatewayStore: GatewayStoring {
    var commitStatistics: SQLiteExecutor.Statistics { executor.statistics }

    func checkWritable() async throws {
        _ = try await executor.write { _ in true }
    }

    func acquireLease(identityKey: String) async -> Bool { true }

    func holdsLease(identityKey: String) -> Bool { true }

    func releaseLease(identityKey: String) {}

    func diagnosticsDevices(app: String?, records: Bool) async throws -> [(
        app: String, device: DiagnosticsLedger.Device
    )] {
        try await executor.read { connection in
            try DiagnosticsLedger.devices(app: app, records: records, connection)
        }
    }
}
