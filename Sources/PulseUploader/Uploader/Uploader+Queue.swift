import PulseStorage

extension Uploader {
    /// Runs `body` in a transaction on the queue after rebasing the stored wall-clock times if the
    /// clock stepped since they were written (``QueueClockBase/rebase(_:clock:)``), so `body` compares
    /// them with readings of the current clock: alone (`write`), or in the next group commit
    /// (`commit`) when `groupCommit` is set.
    func rebasedTransaction<T: Sendable>(
        groupCommit: Bool = false, _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws -> T {
        let clock = self.clock
        let rebased: @Sendable (SQLiteConnection) throws -> T = { connection in
            try QueueClockBase.rebase(connection, clock: clock)
            return try body(connection)
        }
        return groupCommit ? try await executor.commit(rebased) : try await executor.write(rebased)
    }
}
