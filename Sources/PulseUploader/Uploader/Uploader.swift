import Foundation
import OTLPProtobuf
public import PulseKit
import PulseProtocol
import PulseStorage
import Synchronization

/// The companion uploader: a durable on-disk queue of telemetry records, sealed into immutable OTLP/HTTP
/// batches and delivered at least once to a PulseGate gateway.
///
/// ```swift
/// var configuration = UploaderConfiguration(
///     endpoint: "http://127.0.0.1:4318", appId: "my-app", dataDirectory: "/var/lib/my-app/telemetry")
/// configuration.appVersion = "1.4.2"
/// let uploader = try await Uploader(configuration: configuration)
/// let receipt = try await uploader.record(.event(EventEntry(name: "checkout", attributes: ["items": 3])))
/// // receipt.recordId is the record's log.record.uid; the record is on disk (fsync'd) now.
/// let task = Task { try await uploader.run() }  // the foreground loop: seals and sends
/// ```
///
/// Durability: ``record(_:)`` returns only after the record's transaction committed with
/// `synchronous=FULL` in WAL mode, i.e. after the WAL was fsync'd. Concurrent calls share one commit (group
/// commit), so they share the fsync. A process killed at any moment afterwards keeps the record.
///
/// Every process that opens the same data directory (the app, `pulsegate upload drain`, `pulsegate upload
/// status`) sees the same queue; leases keep two senders from sending one batch at the same time.
public final class Uploader: Sendable {
    /// The identity sent as resource attributes.
    public let identity: ResourceIdentity
    /// The data directory in use.
    public let dataDirectory: String

    let appId: String
    let endpoint: String
    let clock: UploaderClock
    let random: RandomSource
    /// The `log.record.uid` generator (monotonic within this uploader).
    let recordIds: ULIDGenerator
    let executor: SQLiteExecutor
    let transport: any UploadTransport
    private let ownedTransport: CurlTransport?
    private let backgroundTransfer: (any BackgroundTransfer)?
    let outOfProcessTransfer: (any OutOfProcessTransfer)?
    let conditions: (any ConditionsProvider)?
    private let policyRefresh: UploaderConfiguration.PolicyRefreshHook?
    private let resourceId: Int64
    private let mutable: Mutex<MutableState>
    let remote: RemotePolicyState
    private let callLog = CallLog()

    private struct MutableState {
        var policy: UploadPolicy
        var lastHandOverMilliseconds: Int64?
    }

    /// The file name of the queue inside the data directory.
    public static let databaseFileName = "queue.sqlite"
    /// How often the foreground loop may hand urgent or large batches to the background transfer.
    static let handOverIntervalMilliseconds: Int64 = 30_000

    /// Opens (creating if needed) the queue in the configuration's data directory.
    ///
    /// - Throws: ``UploaderError`` (``UploaderError/Code/configuration`` for a bad endpoint, app id or policy;
    ///   ``UploaderError/Code/storage`` when the queue cannot be opened).
    public init(configuration: UploaderConfiguration) async throws(UploaderError) {
        let endpoint = try configuration.normalizedEndpoint()
        guard !configuration.appId.isEmpty else {
            throw UploaderError(.configuration, "the app id must not be empty")
        }
        try configuration.policy.validate()
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.dataDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw UploaderError(
                .configuration, "cannot create the data directory `\(configuration.dataDirectory)`",
                underlying: error)
        }
        let executor: SQLiteExecutor
        do {
            executor = try await SQLiteExecutor(
                path: configuration.dataDirectory + "/" + Uploader.databaseFileName, threadName: "pulse.uploader")
        } catch {
            throw UploaderError.storage(error, "cannot open the queue in `\(configuration.dataDirectory)`")
        }
        let random = configuration.random
        let migrator = QueueSchema.migrator
        let deviceOverride = configuration.deviceId
        let installationOverride = configuration.installationId
        let configuredKillSwitch = configuration.policy.killSwitch
        let stored: (String, String, Int64, String?)
        let startedAt = configuration.clock.nowMilliseconds()
        do {
            stored = try await executor.write { connection in
                try migrator.migrate(connection)
                try DiagnosticsStore.startSession(connection, now: startedAt)
                let device = try QueueSettings.identifier(connection, QueueSettings.deviceId) { random.identifier() }
                let installation = try QueueSettings.identifier(connection, QueueSettings.installationId) {
                    random.identifier()
                }
                if configuredKillSwitch {
                    try QueueSettings.set(connection, QueueSettings.killSwitch, 1)
                    try QueueStore.purge(connection, reason: .killSwitch)
                }
                return (
                    device, installation, try QueueSettings.integer(connection, Uploader.policyRevisionSetting) ?? 0,
                    try QueueSettings.string(connection, Uploader.policySnapshotSetting)
                )
            }
        } catch {
            try? await executor.close()
            throw UploaderError.storage(error, "cannot prepare the queue")
        }
        // The remote policy applied by an earlier process stays in force (its kill switch is in the queue).
        let persisted = Uploader.persistedPolicy(
            stored.3, base: configuration.policy, explicit: configuration.explicitPolicy)
        let policy = persisted ?? configuration.policy
        var identity = ResourceIdentity(
            deviceId: deviceOverride ?? stored.0, installationId: installationOverride ?? stored.1,
            serviceName: nil, appVersion: configuration.appVersion, buildNumber: configuration.buildNumber,
            packageName: configuration.packageName, userId: configuration.userId,
            attributes: configuration.resourceAttributes)
        identity.osVersion = Uploader.osRelease()
        identity.hostArch = Uploader.machine()
        let attributes = BatchBodyBuilder.encodeResourceAttributes(
            identity.resourceAttributes(appId: configuration.appId))
        do {
            resourceId = try await executor.write { connection in
                try QueueStore.resourceId(connection, attributes: attributes)
            }
        } catch {
            try? await executor.close()
            throw UploaderError.storage(error, "cannot store the resource")
        }
        self.identity = identity
        self.executor = executor
        self.dataDirectory = configuration.dataDirectory
        self.appId = configuration.appId
        self.endpoint = endpoint
        self.clock = configuration.clock
        self.random = random
        self.recordIds = ULIDGenerator(random: random)
        if let transport = configuration.transport {
            self.transport = transport
            self.ownedTransport = nil
        } else {
            let curl = CurlTransport(options: CurlTransport.Options(connections: policy.maximumInFlight))
            self.transport = curl
            self.ownedTransport = curl
        }
        self.backgroundTransfer = configuration.backgroundTransfer
        self.outOfProcessTransfer = configuration.outOfProcessTransfer
        self.conditions = configuration.conditions
        self.policyRefresh = configuration.policyRefresh
        self.mutable = Mutex(MutableState(policy: policy))
        self.remote = RemotePolicyState(
            base: configuration.policy,
            applied: persisted == nil ? 0 : stored.2,
            capabilities: configuration.capabilities,
            refreshIntervalMilliseconds: configuration.policyRefreshIntervalMilliseconds ?? 0,
            explicit: configuration.explicitPolicy)
    }

    /// Closes the queue and stops the transport this uploader created. Later calls fail with
    /// ``UploaderError/Code/closed``.
    public func close() async throws(UploaderError) {
        try? await flushCallLog()
        ownedTransport?.close()
        do {
            try await executor.close()
        } catch {
            throw UploaderError.storage(error, "closing the queue failed")
        }
    }

    /// The policy in force.
    public var policy: UploadPolicy {
        mutable.withLock { $0.policy }
    }

    // MARK: - Recording

    /// Queues one record and returns once it is durable on disk.
    ///
    /// The record gets its id now (see ``RecordReceipt``). If its batch group reaches the size limit, or it is
    /// a crash report or an attachment, the due batches are sealed before this returns.
    ///
    /// - Throws: ``UploaderError``: ``UploaderError/Code/invalidRecord``; ``UploaderError/Code/collectionStopped``
    ///   (consent withdrawn or kill switch on); ``UploaderError/Code/oversized``; ``UploaderError/Code/queueFull``
    ///   (only higher-priority data is left to drop); ``UploaderError/Code/storage``. Every refusal except an
    ///   invalid record is counted as a drop.
    @discardableResult
    public func record(_ record: TelemetryRecord) async throws(UploaderError) -> RecordReceipt {
        try await logged(
            "record(\(record.typeName))", detail: { "ok: \($0.recordId)" },
            run: { () async throws(UploaderError) in try await recordUnlogged(record) })
    }

    private func recordUnlogged(_ record: TelemetryRecord) async throws(UploaderError) -> RecordReceipt {
        let policy = self.policy
        try admit(record, policy: policy)
        let encoder = RecordEncoder(clock: clock, random: random, policy: policy, recordIds: recordIds)
        let encoded: EncodedRecord
        do {
            encoded = try encoder.encode(record)
        } catch let error where error.code == .oversized {
            try await countRefusal(.oversized, bytes: 0)
            throw error
        }
        let resourceId = self.resourceId
        let inserted: QueueStore.Inserted
        do {
            inserted = try await rebasedTransaction(groupCommit: true) { connection in
                try QueueStore.insert(connection, record: encoded, resourceId: resourceId, policy: policy)
            }
        } catch let refusal as QueueStore.RecordRefusal {
            try await countRefusal(refusal.reason, bytes: Int64(encoded.fragment.count))
            throw Uploader.refusalError(refusal.reason)
        } catch {
            throw UploaderError.storage(error, "cannot queue the record")
        }
        if inserted.reachedSizeLimit || encoded.recordClass == .crash || encoded.recordClass == .attachment {
            _ = try await sealBatches(nil)
        }
        return RecordReceipt(
            recordId: encoded.recordId, crashId: encoded.crashId, signal: encoded.signal,
            recordClass: encoded.recordClass, sequence: inserted.sequence)
    }

    private func countRefusal(_ reason: DropReason, bytes: Int64) async throws(UploaderError) {
        do {
            try await executor.commit { connection in
                try QueueStore.countDrop(connection, reason, records: 1, batches: 0, bytes: bytes)
            }
        } catch {
            throw UploaderError.storage(error, "cannot count a refused record")
        }
    }

    private static func refusalError(_ reason: DropReason) -> UploaderError {
        switch reason {
        case .consent: return UploaderError(.collectionStopped, "consent is withdrawn; the record was not queued")
        case .killSwitch: return UploaderError(.collectionStopped, "the kill switch is on; the record was not queued")
        case .oversized:
            return UploaderError(.oversized, "the record is larger than the largest batch the policy allows")
        default:
            return UploaderError(
                .queueFull, "the queue is at its cap and holds only higher-priority data; the record was dropped")
        }
    }

    // MARK: - Sealing

    /// Seals what is due: groups that reached the size limit, groups whose oldest record waited the seal
    /// interval, crash reports and attachments; or everything waiting when `trigger` is given.
    ///
    /// - Returns: the number of batches sealed.
    @discardableResult
    public func seal(_ trigger: SealTrigger? = nil) async throws(UploaderError) -> Int {
        try await logged(
            "seal(\(trigger.map { "\($0)" } ?? "due"))", detail: { "ok: \($0) batches" },
            run: { () async throws(UploaderError) in try await sealBatches(trigger).count })
    }

    func sealBatches(_ trigger: SealTrigger?) async throws(UploaderError) -> [BatchSealer.Sealed] {
        let identity = self.identity
        let sealer = BatchSealer(
            policy: policy, random: random,
            diagnostics: BatchSealer.DiagnosticsIdentity(
                resourceId: resourceId, deviceId: identity.deviceId, installationId: identity.installationId,
                appVersion: identity.appVersion))
        let now = clock.nowMilliseconds()
        let force = trigger == .size || trigger == .interval || trigger == .immediate ? nil : trigger
        do {
            return try await rebasedTransaction { connection in
                try sealer.seal(connection, now: now, force: force)
            }
        } catch {
            throw UploaderError.storage(error, "sealing failed")
        }
    }

    // MARK: - Sending

    /// One foreground pass: sends due batches of the foreground route (not crash reports, attachments or large
    /// batches) until none is due, respecting conditions, holds and the attempt window.
    public func sendDue() async throws(UploaderError) -> SendReport {
        try await logged("sendDue()", detail: Uploader.describe) { () async throws(UploaderError) in
            try await send(includesBackground: false, respectsConditions: true)
        }
    }

    /// The background job: takes the drain lock, seals everything waiting, sends every due batch (both routes)
    /// until none is due, and returns. Non-urgent batches still wait for better conditions.
    ///
    /// - Returns: the report, or `nil` when another drain holds the lock.
    public func drain() async throws(UploaderError) -> SendReport? {
        try await logged(
            "drain()", detail: { $0.map(Uploader.describe) ?? "ok: another drain holds the queue" },
            run: { () async throws(UploaderError) in try await drainUnlogged() })
    }

    private func drainUnlogged() async throws(UploaderError) -> SendReport? {
        guard let lock = FileLock(path: dataDirectory + "/drain.lock") else {
            return nil
        }
        defer { lock.release() }
        _ = try await sealBatches(.background)
        return try await send(includesBackground: true, respectsConditions: true)
    }

    /// Seals everything waiting and sends every sealed batch now, oldest first, whatever the route, the
    /// conditions, the batches' and the endpoint's backoff and the attempt window. A `Retry-After` or 401/403
    /// hold and another sender's lease still apply (the server asked; the other sender has the batch), and
    /// the pass stops at the first failure that is the endpoint's (it is down: the rest would fail too).
    ///
    /// - Returns: the report; ``SendReport/remainingBatches`` counts the batches still queued afterwards
    ///   (`pulsegate upload flush` exits with status 3 when it is not zero).
    public func flush() async throws(UploaderError) -> SendReport {
        try await logged("flush()", detail: Uploader.describe) { () async throws(UploaderError) in
            _ = try await sealBatches(.flush)
            var report = try await send(includesBackground: true, respectsConditions: false, ignoresBackoff: true)
            do {
                report.remainingBatches = try await executor.read { connection in
                    try connection.queryFirst("SELECT count(*) FROM batch") { row in try row.column(0, as: Int.self) }
                        ?? 0
                }
            } catch {
                throw UploaderError.storage(error, "reading the queue failed")
            }
            return report
        }
    }

    private func send(includesBackground: Bool, respectsConditions: Bool, ignoresBackoff: Bool = false)
        async throws(UploaderError) -> SendReport
    {
        var report = SendReport()
        var urgentOnly = false
        if respectsConditions, let conditions {
            urgentOnly = await conditions.currentConditions().defersNonUrgentUploads
        }
        var scope = DeliveryStore.Scope(
            includesBackground: includesBackground, urgentOnly: urgentOnly, ignoresBackoff: ignoresBackoff)
        // Claims use the pass's start time, and a failed batch is never due again before start + 1 ms (its own
        // backoff or its endpoint's), so one pass attempts each batch at most once. A flush, which ignores
        // backoff, walks the queue by `seq` instead.
        let now = clock.nowMilliseconds()
        let endpoint = self.endpoint
        while true {
            let policy = self.policy
            let claim: DeliveryStore.Claim
            let claimScope = scope
            let current = clock.nowMilliseconds()
            do {
                claim = try await rebasedTransaction { connection in
                    try DeliveryStore.claim(
                        connection, now: now, policy: policy, scope: claimScope, endpoint: endpoint,
                        limit: policy.maximumInFlight, current: current)
                }
            } catch {
                throw UploaderError.storage(error, "claiming batches failed")
            }
            report.deferred = max(report.deferred, claim.deferred)
            if claim.batches.isEmpty {
                report.nextAttemptMilliseconds = claim.nextAttemptMilliseconds
                report.blockedBy = claim.blockedBy?.rawValue
                break
            }
            let results = await withTaskGroup(of: (DeliveryStore.Claimed, UploadOutcome).self) { group in
                for batch in claim.batches {
                    group.addTask { (batch, await self.attempt(batch)) }
                }
                var results: [(DeliveryStore.Claimed, UploadOutcome)] = []
                for await result in group {
                    results.append(result)
                }
                return results
            }
            scope.afterSeq = claim.batches.map(\.seq).max() ?? scope.afterSeq
            var endpointFailed = false
            // Settled oldest first, so the error log reads in queue order.
            for (batch, outcome) in results.sorted(by: { $0.0.seq < $1.0.seq }) {
                try await settle(batch, outcome: outcome, report: &report)
                endpointFailed = endpointFailed || outcome.isEndpointFailure
            }
            if endpointFailed && ignoresBackoff {
                report.blockedBy = DeliveryStore.Blocker.endpointBackoff.rawValue
                break  // the endpoint is down; a normal pass learns it from the next claim
            }
            // After a hold or an endpoint failure, the next claim reports it and ends the pass.
        }
        if remote.newerAdvertised {
            await refreshPolicyIfDue()
        }
        return report
    }

    /// The request that sends `batch`: its stored bytes under its stored id, with `Apsio-Sent-At` at
    /// `sentAt` — `nil` for a request the operating system sends whenever it chooses (spec 4.4 / 5.1).
    func request(for batch: DeliveryStore.Claimed, sentAt: Int64?) -> UploadRequest {
        var headers = [
            ("Apsio-Batch-Id", batch.batchId),
            ("Apsio-App-Id", appId),
        ]
        if let sentAt {
            headers.append(("Apsio-Sent-At", RFC3339.format(epochMilliseconds: sentAt)))
        }
        headers += [
            ("Content-Type", "application/json"),
            ("Content-Encoding", batch.encoding.rawValue),
        ]
        if let sequence = batch.sequence {
            headers.append((Uploader.sequenceHeader, String(sequence)))
        }
        return UploadRequest(url: endpoint + batch.signal.path, headers: headers, body: batch.body)
    }

    /// Sends one claimed batch: its stored bytes, its stored id.
    private func attempt(_ batch: DeliveryStore.Claimed) async -> UploadOutcome {
        let request = request(for: batch, sentAt: clock.nowMilliseconds())
        do {
            let response = try await transport.send(request)
            remote.advertise(response.headers["apsio-policy-revision"])
            return UploadOutcome.classify(response, signal: batch.signal, now: clock.nowMilliseconds())
        } catch {
            return .retryable(status: nil, message: error.message)
        }
    }

    private func settle(_ batch: DeliveryStore.Claimed, outcome: UploadOutcome, report: inout SendReport)
        async throws(UploaderError)
    {
        report.attempted += 1
        switch outcome {
        case .delivered(let duplicate):
            report.delivered += 1
            if duplicate { report.duplicates += 1 }
        case .partiallyDelivered(let rejected, _):
            report.delivered += 1
            report.partiallyRejectedRecords += rejected
        case .rejected:
            report.rejected += 1
        case .authenticationRequired:
            report.authenticationHeld = true
        case .throttled, .retryable:
            report.retrying += 1
        }
        try await apply(to: .claimed(batch)) { _ in outcome }
    }

    /// Which claim an outcome belongs to: one this process holds, or one an out-of-process transfer took
    /// (looked up by batch id and attempt number, in the settling transaction).
    enum ClaimReference: Sendable {
        case claimed(DeliveryStore.Claimed)
        case transfer(BatchLease)
    }

    /// Applies the outcome `classify` gives for the batch's signal through the response table every sender
    /// shares (``DeliveryStore/settle``), in one committed transaction, then asks for a policy refresh after
    /// a 401/403. Returns what the settle did and the outcome.
    @discardableResult
    func apply(to reference: ClaimReference, _ classify: @escaping @Sendable (Signal) -> UploadOutcome)
        async throws(UploaderError) -> (DeliveryStore.Settlement, UploadOutcome)
    {
        let policy = self.policy
        let now = clock.nowMilliseconds()
        let endpoint = self.endpoint
        let random = self.random
        let settlement: DeliveryStore.Settlement
        let outcome: UploadOutcome
        do {
            (settlement, outcome) = try await executor.commit { connection in
                let batch: DeliveryStore.Claimed
                switch reference {
                case .claimed(let claimed):
                    batch = claimed
                case .transfer(let lease):
                    guard
                        let claimed = try DeliveryStore.claimed(
                            connection, batchId: lease.batchId, attempt: lease.attempt)
                    else { return (.gone, classify(.logs)) }
                    batch = claimed
                }
                let outcome = classify(batch.signal)
                let settlement = try DeliveryStore.settle(
                    connection, batch: batch, outcome: outcome, now: now, policy: policy, endpoint: endpoint,
                    random: random)
                return (settlement, outcome)
            }
        } catch {
            throw UploaderError.storage(error, "recording an upload outcome failed")
        }
        if settlement == .applied, case .authenticationRequired(let status) = outcome {
            // A fresh policy may release the hold; the app's hook may bring credentials too.
            _ = try? await refreshPolicy()
            if let policyRefresh {
                await policyRefresh(status)
            }
        }
        return (settlement, outcome)
    }

    // MARK: - Lifecycle and the foreground loop

    /// The app moved to the background: seal everything waiting and hand the queue to the background
    /// transfer (if one is configured and anything is queued). The foreground loop stops sending until
    /// ``enterForeground()``.
    ///
    /// - Returns: the hand-over made, if any.
    @discardableResult
    public func enterBackground() async throws(UploaderError) -> BackgroundHandOver? {
        try await logged(
            "enterBackground()", detail: { $0.map { "ok: handed over \($0.pendingBatches)" } ?? "ok" },
            run: { () async throws(UploaderError) in
                try await setSetting(QueueSettings.lifecycle, "background")
                _ = try await sealBatches(.background)
                return try await handOver(.movedToBackground, force: true)
            })
    }

    /// The app is in the foreground again: the foreground loop resumes sending.
    public func enterForeground() async throws(UploaderError) {
        try await logged("enterForeground()") { () async throws(UploaderError) in
            try await setSetting(QueueSettings.lifecycle, "foreground")
        }
    }

    /// Whether the queue's lifecycle state is background (shared by every process on this queue).
    public func isInBackground() async throws(UploaderError) -> Bool {
        do {
            return try await executor.read { connection in
                try QueueSettings.string(connection, QueueSettings.lifecycle) == "background"
            }
        } catch {
            throw UploaderError.storage(error, "reading the lifecycle state failed")
        }
    }

    /// Hands due batches of the background route (crash reports, attachments, large batches) to the background
    /// transfer, at most every 30 s unless `force`.
    ///
    /// - Returns: the hand-over made, if any.
    @discardableResult
    public func handOverDue(force: Bool = false) async throws(UploaderError) -> BackgroundHandOver? {
        let now = clock.nowMilliseconds()
        let due: (Int, Int)
        do {
            due = try await executor.read { connection in
                let urgent =
                    try connection.queryFirst(
                        """
                        SELECT count(*) FROM batch WHERE background = 1 AND class IN (?, ?)
                        AND next_attempt_ms <= ? AND lease_until_ms <= ?
                        """, [RecordClass.crash.rawValue, RecordClass.attachment.rawValue, now, now]
                    ) { row in try row.column(0, as: Int.self) } ?? 0
                let large =
                    try connection.queryFirst(
                        """
                        SELECT count(*) FROM batch WHERE background = 1 AND next_attempt_ms <= ? AND lease_until_ms <= ?
                        """, [now, now]
                    ) { row in try row.column(0, as: Int.self) } ?? 0
                return (urgent, large)
            }
        } catch {
            throw UploaderError.storage(error, "reading due batches failed")
        }
        guard due.1 > 0 else { return nil }
        return try await handOver(due.0 > 0 ? .urgentUpload : .largeUpload, force: force)
    }

    private func handOver(_ reason: BackgroundHandOver.Reason, force: Bool) async throws(UploaderError)
        -> BackgroundHandOver?
    {
        guard backgroundTransfer != nil || outOfProcessTransfer != nil else { return nil }
        let now = clock.nowMilliseconds()
        let allowed = mutable.withLock { state -> Bool in
            if !force, let last = state.lastHandOverMilliseconds, now - last < Uploader.handOverIntervalMilliseconds,
                now >= last
            {
                return false
            }
            state.lastHandOverMilliseconds = now
            return true
        }
        guard allowed else { return nil }
        let pending: (Int, Int64?)
        do {
            pending = try await executor.read { connection in
                try connection.queryFirst("SELECT count(*), min(next_attempt_ms) FROM batch") { row in
                    (try row.column(0, as: Int.self), try row.column(1, as: Int64?.self))
                } ?? (0, nil)
            }
        } catch {
            throw UploaderError.storage(error, "reading the queue failed")
        }
        guard pending.0 > 0 else { return nil }
        var handOver = BackgroundHandOver(
            reason: reason, dataDirectory: dataDirectory, pendingBatches: pending.0,
            earliestAttemptMilliseconds: pending.1)
        if let outOfProcessTransfer {
            handOver.transferredBatches = try await transfer(
                route: reason == .movedToBackground ? .everything : .backgroundRoute, to: outOfProcessTransfer)
        }
        try await backgroundTransfer?.handOver(handOver)
        return handOver
    }

    /// One step of the foreground loop: expire, seal what is due, send the foreground route, and hand urgent
    /// or large batches over. Returns when the loop should look again (epoch ms).
    func step() async throws(UploaderError) -> Int64 {
        let now = clock.nowMilliseconds()
        var wake = now + 1_000
        if callLog.pendingCount > 0 {
            try? await flushCallLog()
        }
        if outOfProcessTransfer != nil {
            _ = try? await settleFinishedTransfers()
        }
        if try await isInBackground() {
            return wake
        }
        await refreshPolicyIfDue()
        _ = try await sealBatches(nil)
        let report = try await send(includesBackground: false, respectsConditions: true)
        if let next = report.nextAttemptMilliseconds {
            wake = min(wake, max(next, now + 10))
        }
        _ = try? await handOverDue()
        return wake
    }

    /// The foreground loop: seals on the interval and size triggers, sends due batches, hands urgent and large
    /// ones to the background transfer, and sleeps until the next deadline (at most a second). Runs until the
    /// task is cancelled. Storage errors end the loop; upload errors never do.
    public func run() async throws(UploaderError) {
        while !Task.isCancelled {
            let wake = try await step()
            let delay = max(10, min(1_000, wake - clock.nowMilliseconds()))
            do {
                try await clock.sleep(milliseconds: delay)
            } catch {
                return
            }
        }
    }

    // MARK: - Consent, kill switch, policy

    /// Grants consent: collection resumes (if the kill switch is off).
    public func grantConsent() async throws(UploaderError) {
        try await logged("grantConsent()") { () async throws(UploaderError) in
            try await setSetting(QueueSettings.consent, "granted")
        }
    }

    /// Withdraws consent: drops the whole queue (counted as `consent`) and refuses records until consent is
    /// granted again.
    public func revokeConsent() async throws(UploaderError) {
        try await logged("revokeConsent()") { () async throws(UploaderError) in try await revokeConsentUnlogged() }
    }

    private func revokeConsentUnlogged() async throws(UploaderError) {
        do {
            try await executor.write { connection in
                try QueueSettings.set(connection, QueueSettings.consent, "revoked")
                try QueueStore.purge(connection, reason: .consent)
            }
        } catch {
            throw UploaderError.storage(error, "withdrawing consent failed")
        }
    }

    /// Turns the kill switch on (drops the whole queue, counted as `killSwitch`, and stops collection) or off
    /// (collection resumes if consent is granted).
    public func setKillSwitch(_ on: Bool) async throws(UploaderError) {
        try await logged("setKillSwitch(\(on))") { () async throws(UploaderError) in
            try await setKillSwitchUnlogged(on)
        }
    }

    private func setKillSwitchUnlogged(_ on: Bool) async throws(UploaderError) {
        do {
            try await executor.write { connection in
                try QueueSettings.set(connection, QueueSettings.killSwitch, on ? 1 : 0)
                if on {
                    try QueueStore.purge(connection, reason: .killSwitch)
                }
            }
        } catch {
            throw UploaderError.storage(error, "setting the kill switch failed")
        }
    }

    /// Applies a policy atomically: validates all of it first, then sets the kill switch, enforces the
    /// (possibly lower) caps, releases a 401/403 hold, and uses the new values from the next operation on.
    ///
    /// - Throws: ``UploaderError/Code/configuration`` (nothing applied) for an invalid policy.
    public func apply(policy: UploadPolicy) async throws(UploaderError) {
        try await applyPolicy(policy) { _ in }
        remote.update { $0.base = policy }
    }

    /// ``apply(policy:)`` with further settings written in the same transaction (all or nothing).
    func applyPolicy(_ policy: UploadPolicy, alsoWrite: @escaping @Sendable (SQLiteConnection) throws -> Void)
        async throws(UploaderError)
    {
        try policy.validate()
        do {
            try await executor.write { connection in
                try alsoWrite(connection)
                try QueueSettings.set(connection, QueueSettings.killSwitch, policy.killSwitch ? 1 : 0)
                if policy.killSwitch {
                    try QueueStore.purge(connection, reason: .killSwitch)
                }
                try connection.execute("DELETE FROM setting WHERE key = ?", [QueueSettings.authHoldUntil])
                try QueueStore.enforceCaps(connection, policy: policy)
            }
        } catch {
            throw UploaderError.storage(error, "applying the policy failed")
        }
        mutable.withLock { $0.policy = policy }
        noteCall("apply(policy:)", outcome: "ok: diagnosticsLevel \(policy.diagnosticsLevel)")
    }

    private func setSetting(_ key: String, _ value: String) async throws(UploaderError) {
        do {
            try await executor.write { connection in try QueueSettings.set(connection, key, value) }
        } catch {
            throw UploaderError.storage(error, "updating `\(key)` failed")
        }
    }

    // MARK: - Status

    /// A snapshot of the queue.
    public func status() async throws(UploaderError) -> UploaderStatus {
        try? await flushCallLog()
        let now = clock.nowMilliseconds()
        let identity = self.identity
        let policy = self.policy
        let level = policy.diagnosticsLevel
        let endpoint = self.endpoint
        let remoteValues = remote.read()
        let settings = policy.settings(
            configured: remoteValues.base, explicit: remote.explicit, remoteApplied: remoteValues.applied > 0)
        do {
            return try await executor.read { connection in
                var status = try Uploader.readStatus(
                    connection, now: now, identity: identity, policy: policy, endpoint: endpoint)
                status.diagnosticsLevel = level
                status.policySettings = settings
                status.diagnostics = try DiagnosticsStore.snapshot(connection)
                status.recentCalls = try CallLog.read(connection, limit: UploaderStatus.recentCallLimit)
                return status
            }
        } catch {
            throw UploaderError.storage(error, "reading the status failed")
        }
    }

    // MARK: - Call log

    /// The header carrying a batch's sequence number.
    public static let sequenceHeader = "Apsio-Batch-Sequence"

    /// Runs an API call and, at ``DiagnosticsLevel/callDetails`` and above, logs it with its outcome.
    func logged<T>(
        _ call: @autoclosure () -> String, detail: (T) -> String = { _ in "ok" },
        run body: () async throws(UploaderError) -> T
    ) async throws(UploaderError) -> T {
        do {
            let value = try await body()
            if policy.diagnosticsLevel >= .callDetails, noteCall(call(), outcome: detail(value)) {
                try? await flushCallLog()
            }
            return value
        } catch {
            if policy.diagnosticsLevel >= .callDetails,
                noteCall(call(), outcome: "error: \(error.code): \(error.message)")
            {
                try? await flushCallLog()
            }
            throw error
        }
    }

    /// Appends a call to the log (when the level asks for it); returns whether enough entries are waiting to
    /// be written.
    @discardableResult
    private func noteCall(_ call: String, outcome: String) -> Bool {
        let level = policy.diagnosticsLevel
        guard level >= .callDetails else { return false }
        let entry = CallLogEntry(
            atMilliseconds: clock.nowMilliseconds(), call: CallLog.clip(call), outcome: CallLog.clip(outcome),
            stack: level >= .callDetailsAndStackTraces ? CallLog.callerStack() : nil)
        return callLog.append(entry)
    }

    /// Call-log entries waiting in memory.
    var callLogPendingCount: Int { callLog.pendingCount }

    /// Writes the waiting call-log entries (through the group commit, so they share an fsync with concurrent
    /// enqueues).
    func flushCallLog() async throws {
        let entries = callLog.take()
        guard !entries.isEmpty else { return }
        try await executor.commit { connection in try CallLog.write(entries, connection) }
    }

    private static func describe(_ report: SendReport) -> String {
        "ok: attempted \(report.attempted), delivered \(report.delivered), retrying \(report.retrying),"
            + " rejected \(report.rejected)"
    }

    private static func readStatus(
        _ connection: SQLiteConnection, now: Int64, identity: ResourceIdentity, policy: UploadPolicy, endpoint: String
    ) throws -> UploaderStatus {
        var depth: [RecordClass: UploaderStatus.ClassDepth] = [:]
        for recordClass in RecordClass.allCases {
            depth[recordClass] = UploaderStatus.ClassDepth(
                recordClass: recordClass, waitingRecords: 0, waitingBytes: 0, batches: 0, batchedRecords: 0,
                batchBytes: 0)
        }
        let waiting = try connection.query("SELECT class, count(*), sum(size) FROM record GROUP BY class") { row in
            (try row.column(0, as: Int.self), try row.column(1, as: Int64.self), try row.column(2, as: Int64.self))
        }
        for (raw, count, bytes) in waiting {
            guard let recordClass = RecordClass(rawValue: raw) else { continue }
            depth[recordClass]?.waitingRecords = count
            depth[recordClass]?.waitingBytes = bytes
        }
        let sealed = try connection.query(
            "SELECT class, count(*), sum(record_count), sum(body_bytes) FROM batch GROUP BY class"
        ) { row in
            (
                try row.column(0, as: Int.self), try row.column(1, as: Int64.self), try row.column(2, as: Int64.self),
                try row.column(3, as: Int64.self)
            )
        }
        for (raw, count, records, bytes) in sealed {
            guard let recordClass = RecordClass(rawValue: raw) else { continue }
            depth[recordClass]?.batches = count
            depth[recordClass]?.batchedRecords = records
            depth[recordClass]?.batchBytes = bytes
        }
        let totals = try QueueStore.totals(connection)
        let oldestRecord =
            try connection.queryFirst("SELECT min(created_ms) FROM record") { row in
                try row.column(0, as: Int64?.self)
            } ?? nil
        let oldestBatch =
            try connection.queryFirst("SELECT min(oldest_ms) FROM batch") { row in
                try row.column(0, as: Int64?.self)
            } ?? nil
        let oldest = [oldestRecord, oldestBatch].compactMap { $0 }.min()
        let next = try DeliveryStore.nextAttempt(
            connection, scope: DeliveryStore.Scope(includesBackground: true, urgentOnly: false), now: now,
            policy: policy)
        let hold = try QueueSettings.integer(connection, QueueSettings.holdUntil).flatMap {
            DeliveryStore.holds($0, now: now, longest: RetryAfter.maximumMilliseconds) ? $0 : nil
        }
        let authHold = try QueueSettings.integer(connection, QueueSettings.authHoldUntil).flatMap {
            DeliveryStore.holds($0, now: now, longest: policy.authenticationHoldMilliseconds) ? $0 : nil
        }
        let endpointState = try DeliveryStore.endpointState(connection, endpoint: endpoint)
        let endpointHold = endpointState.flatMap {
            DeliveryStore.holds($0.holdUntilMilliseconds, now: now, longest: policy.backoffCapMilliseconds)
                ? $0.holdUntilMilliseconds : nil
        }
        var drops: [DropReason: UploaderStatus.DropCount] = [:]
        for reason in DropReason.allCases {
            drops[reason] = UploaderStatus.DropCount(records: 0, batches: 0, bytes: 0)
        }
        let dropRows = try connection.query("SELECT reason, records, batches, bytes FROM drop_count") { row in
            (
                try row.column(0, as: String.self), try row.column(1, as: Int64.self),
                try row.column(2, as: Int64.self),
                try row.column(3, as: Int64.self)
            )
        }
        for (reason, records, batches, bytes) in dropRows {
            guard let reason = DropReason(rawValue: reason) else { continue }
            drops[reason] = UploaderStatus.DropCount(records: records, batches: batches, bytes: bytes)
        }
        let errors = try connection.query(
            "SELECT at_ms, batch_id, status, message FROM error_log ORDER BY id DESC LIMIT 10"
        ) { row in
            UploaderStatus.ErrorEntry(
                atMilliseconds: try row.column(0, as: Int64.self), batchId: try row.column(1, as: String?.self),
                status: try row.column(2, as: Int?.self), message: try row.column(3, as: String.self))
        }
        let stop = try QueueSettings.collectionStop(connection)
        let killSwitch = try QueueSettings.integer(connection, QueueSettings.killSwitch) == 1
        var status = UploaderStatus(
            classes: RecordClass.allCases.compactMap { depth[$0] }, totalRecords: totals.records,
            totalBytes: totals.bytes, oldestAgeMilliseconds: oldest.map { max(0, now - $0) },
            nextAttemptMilliseconds: next.map { max($0, hold ?? $0, authHold ?? $0, endpointHold ?? $0) },
            retryAfterHoldUntilMilliseconds: hold, authenticationHoldUntilMilliseconds: authHold, drops: drops,
            recentErrors: errors, consentGranted: stop != .consent, killSwitch: killSwitch,
            inBackground: try QueueSettings.string(connection, QueueSettings.lifecycle) == "background",
            deviceId: identity.deviceId, installationId: identity.installationId)
        status.endpointBackoffUntilMilliseconds = endpointHold
        status.endpointFailures = endpointState?.failures ?? 0
        status.batchesWithTransfers =
            try connection.queryFirst("SELECT count(*) FROM batch WHERE transfer = 1 AND lease_until_ms > ?", [now]) {
                row in try row.column(0, as: Int.self)
            } ?? 0
        status.policyRevision = try QueueSettings.integer(connection, Uploader.policyRevisionSetting) ?? 0
        status.policyError = try QueueSettings.string(connection, Uploader.policyErrorSetting)
        return status
    }

    // MARK: - System facts

    private static func osRelease() -> String? {
        var info = utsname()
        guard uname(&info) == 0 else { return nil }
        return withUnsafeBytes(of: &info.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private static func machine() -> String? {
        var info = utsname()
        guard uname(&info) == 0 else { return nil }
        let raw = withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        switch raw {
        case "x86_64": return "amd64"
        case "aarch64": return "arm64"
        default: return raw
        }
    }
}
