import PulseStorage

/// What the gateway needs from its store, whichever engine holds it: ``GatewayStore`` (SQLite in
/// the data directory, the embedded default) or ``PostgresGatewayStore`` (fleet mode, any
/// number of gateways on one PostgreSQL database).
///
/// Both keep the same contract: an intake commit returns only once the dedup row and every
/// outbox row of the batch are committed in one transaction shared with concurrent requests; a
/// row leaves the outbox only when the forwarder deletes it after the upstream accepted it.
protocol GatewayStoring: AnyObject, Sendable, GatewayOutboxAdministration {
    /// Whether the last intake commit failed (what `/readyz` reports).
    var commitHealth: CommitHealth { get }
    /// Rows and payload bytes in the outbox, for the intake's cap check.
    var outboxDepth: GatewayStore.Depth { get }
    /// One app's share of ``outboxDepth`` (its `appLimits` outbox share).
    func outboxDepth(app: String) -> GatewayStore.AppDepth
    /// Commit counters for `/metrics`.
    var commitStatistics: SQLiteExecutor.Statistics { get }

    func commitIntake(
        app: String, batchID: String, bodyHash: [UInt8], sentAt: Int64?, now: Int64, retentionMilliseconds: Int64,
        drafts: [OutboxDraft], diagnostics: DiagnosticsObservation?, conflict: Bool, requestID: String?
    ) async throws -> GatewayStore.IntakeOutcome
    /// The same commit, answering through `completion` instead of a task: ``GatewayStore`` calls it
    /// on its commit thread right after the group's `COMMIT`, so the intake resumes the HTTP
    /// connection from there; the default (``PostgresGatewayStore``) runs the async commit in a task.
    func commitIntake(
        app: String, batchID: String, bodyHash: [UInt8], sentAt: Int64?, now: Int64, retentionMilliseconds: Int64,
        drafts: [OutboxDraft], diagnostics: DiagnosticsObservation?, conflict: Bool, requestID: String?,
        completion: @escaping @Sendable (Result<GatewayStore.IntakeOutcome, any Error>) -> Void)
    /// Throws unless the store takes a write transaction now.
    func checkWritable() async throws
    /// Commits a tiny real change through the intake's commit path; clears ``commitHealth``.
    func probeCommit() async throws
    func refreshDepth() async throws
    func pruneExpired(now: Int64, limit: Int) async throws -> Int

    func pendingIdentities() async throws -> [GatewayStore.PendingIdentity]
    func nextRows(identityKey: String, limit: Int) async throws -> [OutboxRow]
    /// The next `limit` event rows of an identity after `seq` (a sliding window's refill).
    func eventRows(identityKey: String, after seq: Int64, limit: Int) async throws -> [OutboxRow]
    func delete(seqs: [Int64]) async throws
    func reschedule(seq: Int64, nextAttemptAt: Int64, error: String) async throws
    func deadLetter(seq: Int64, code: Int, message: String, now: Int64) async throws
    func replaceWithFallback(
        seq: Int64, httpBatchID: String, drafts: [OutboxDraft], now: Int64, requestID: String?
    ) async throws
    func oldestCreatedAt() async throws -> Int64?
    func deadLetterCount() async throws -> Int

    /// Takes the right to send `identityKey`'s rows (fleet mode: a lease in the database, held
    /// until released or expired); `false` while another node holds it.
    func acquireLease(identityKey: String) async -> Bool
    /// Whether the lease taken by ``acquireLease(identityKey:)`` is still held (renewed in time).
    func holdsLease(identityKey: String) -> Bool
    /// Gives the lease up (without waiting).
    func releaseLease(identityKey: String)

    func savePolicy(app: String, revision: Int64, json: [UInt8], now: Int64) async throws
    func cachedPolicies() async throws -> [(String, [UInt8])]
    func diagnosticsDevices(app: String?, records: Bool) async throws -> [(
        app: String, device: DiagnosticsLedger.Device
    )]
}

extension GatewayStoring {
    func commitIntake(
        app: String, batchID: String, bodyHash: [UInt8], sentAt: Int64?, now: Int64, retentionMilliseconds: Int64,
        drafts: [OutboxDraft], diagnostics: DiagnosticsObservation?, conflict: Bool, requestID: String?,
        completion: @escaping @Sendable (Result<GatewayStore.IntakeOutcome, any Error>) -> Void
    ) {
        Task {
            do {
                completion(
                    .success(
                        try await commitIntake(
                            app: app, batchID: batchID, bodyHash: bodyHash, sentAt: sentAt, now: now,
                            retentionMilliseconds: retentionMilliseconds, drafts: drafts, diagnostics: diagnostics,
                            conflict: conflict, requestID: requestID)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    func delete(seq: Int64) async throws {
        try await delete(seqs: [seq])
    }
}

extension GatewayOutboxAdministration {
    /// The oldest 100 dead letters.
    package func deadLetters() async throws -> [GatewayStore.DeadLetter] {
        try await deadLetters(limit: 100)
    }

    /// Moves every dead letter back into the outbox.
    package func requeue(now: Int64) async throws -> Int {
        try await requeue(seqs: nil, now: now)
    }
}

/// What `pulsegate outbox` does with a store: depth per app, dead letters, requeue.
package protocol GatewayOutboxAdministration: Sendable {
    /// Depth, age and dead letters per app, sorted by app.
    func appSummaries() async throws -> [GatewayStore.AppSummary]
    /// Dead letters, oldest first, at most `limit`.
    func deadLetters(limit: Int) async throws -> [GatewayStore.DeadLetter]
    /// Moves dead letters (all, or those with the given sequence numbers) back into the outbox.
    func requeue(seqs: [Int64]?, now: Int64) async throws -> Int
    /// Closes the store.
    func close() async throws
}
