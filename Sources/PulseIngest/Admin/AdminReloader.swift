import Synchronization

/// Lets the admin routes (created before the server object exists) reach
/// ``IngestServer/reloadPolicyFile()``.
final class AdminReloader: Sendable {
    private let server = Mutex<WeakServer>(WeakServer())

    private struct WeakServer: @unchecked Sendable {
        weak var value: IngestServer?
    }

    func set(_ server: IngestServer) {
        self.server.withLock { $0.value = server }
    }

    /// Re-reads the config file; `nil` while the server is not (or no longer) running.
    func reload() async throws(IngestError) -> [String]? {
        guard let server = server.withLock({ $0.value }) else { return nil }
        return try await server.reloadPolicyFile()
    }
}
