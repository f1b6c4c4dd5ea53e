public import PulseKit
import PulseStorage

/// Claim, export and settle: sending batches through a transfer that runs outside the uploader (a
/// background `URLSession`, `curl` started detached), with the same response table as a foreground send.
///
/// ```swift
/// for batch in try await uploader.claimForTransfer() {
///     let exported = try batch.export(into: transfersDirectory)
///     // hand exported.bodyPath and batch.request's URL and headers to the transfer; keep batch.lease.token
/// }
/// // later, possibly in another launch:
/// try await uploader.settle(lease, .response(UploadResponse(status: 200, headers: headers, body: body)))
/// ```
extension Uploader {
    /// Which batches a transfer claim takes.
    public enum TransferRoute: Sendable {
        /// Every due batch (the app moves to the background).
        case everything
        /// Only batches of the background route: crash reports, attachments and batches of at least
        /// ``UploadPolicy/largeUploadBytes``.
        case backgroundRoute
    }

    /// The longest lease a transfer may ask for (7 days).
    public static let maximumTransferLeaseMilliseconds: Int64 = 7 * 24 * 3_600_000

    /// Claims due batches for an out-of-process transfer, oldest first: each gets a lease (stored in the
    /// queue, on the uploader's clock) under which no other sender — the foreground loop, a drain, another
    /// claim — touches it. Holds (`Retry-After`, 401/403), the endpoint's backoff, the attempt window and
    /// deferral (network and power conditions) apply as for any send.
    ///
    /// A lease that lapses before its result is settled makes the batch claimable again, with the same id
    /// and bytes under a new ``BatchLease/attempt``.
    ///
    /// - Parameters:
    ///   - route: which batches to take.
    ///   - maximum: at most this many batches.
    ///   - leaseMilliseconds: the lease's length (default ``UploadPolicy/leaseMilliseconds``); a background
    ///     `URLSession` may need hours. At most ``maximumTransferLeaseMilliseconds``.
    /// - Throws: ``UploaderError/Code/configuration`` for a bad maximum or lease, ``UploaderError/Code/storage``.
    public func claimForTransfer(
        route: TransferRoute = .everything, maximum: Int = 64, leaseMilliseconds: Int64? = nil
    ) async throws(UploaderError) -> [TransferBatch] {
        try await logged(
            "claimForTransfer(\(route))", detail: { "ok: \($0.count) batches" },
            run: { () async throws(UploaderError) in
                try await claimForTransferUnlogged(route: route, maximum: maximum, leaseMilliseconds: leaseMilliseconds)
            })
    }

    private func claimForTransferUnlogged(route: TransferRoute, maximum: Int, leaseMilliseconds: Int64?)
        async throws(UploaderError) -> [TransferBatch]
    {
        guard maximum >= 1 else {
            throw UploaderError(.configuration, "a transfer claim must take at least one batch")
        }
        let policy = self.policy
        let lease = leaseMilliseconds ?? policy.leaseMilliseconds
        guard lease >= 1_000, lease <= Uploader.maximumTransferLeaseMilliseconds else {
            throw UploaderError(.configuration, "a transfer lease must last from 1 s to 7 days")
        }
        var urgentOnly = false
        if let conditions {
            urgentOnly = await conditions.currentConditions().defersNonUrgentUploads
        }
        let scope = DeliveryStore.Scope(
            includesBackground: true, urgentOnly: urgentOnly, backgroundOnly: route == .backgroundRoute,
            leaseMilliseconds: lease, transfer: true)
        let now = clock.nowMilliseconds()
        let endpoint = self.endpoint
        let claim: DeliveryStore.Claim
        do {
            claim = try await rebasedTransaction { connection in
                try DeliveryStore.claim(
                    connection, now: now, policy: policy, scope: scope, endpoint: endpoint, limit: maximum)
            }
        } catch {
            throw UploaderError.storage(error, "claiming batches for a transfer failed")
        }
        return claim.batches.map { batch in
            TransferBatch(
                lease: BatchLease(batchId: batch.batchId, attempt: batch.attempts), signal: batch.signal,
                recordClass: batch.recordClass, request: request(for: batch, sentAt: nil),
                leaseExpiresAtMilliseconds: now + lease, leaseMilliseconds: lease)
        }
    }

    /// Settles what a transfer saw for a claimed batch, applying the response table every sender shares
    /// (delete on 2xx, drop on 400/413/415, hold on 401/403 and on 429/503 with `Retry-After`, back off
    /// otherwise), in one committed transaction.
    ///
    /// Idempotent: settling a lease twice, or settling a lease that lapsed after which the batch was claimed
    /// and sent again, loses nothing and counts nothing twice (see ``TransferSettlement/Effect``). A 2xx is
    /// always applied while the batch is queued: the gateway has it.
    ///
    /// - Throws: ``UploaderError/Code/storage``.
    @discardableResult
    public func settle(_ lease: BatchLease, _ result: TransferResult) async throws(UploaderError)
        -> TransferSettlement
    {
        try await logged(
            "settle(\(lease.token))", detail: { "ok: \($0.effect.rawValue) \($0.verdict.rawValue)" },
            run: { () async throws(UploaderError) in
                let now = clock.nowMilliseconds()
                if case .response(let response) = result {
                    remote.advertise(response.headers["apsio-policy-revision"])
                }
                let (settlement, outcome) = try await apply(to: .transfer(lease)) { signal in
                    switch result {
                    case .response(let response): UploadOutcome.classify(response, signal: signal, now: now)
                    case .failed(let message): .retryable(status: nil, message: message)
                    }
                }
                if remote.newerAdvertised {
                    await refreshPolicyIfDue()
                }
                return TransferSettlement(lease: lease, effect: settlement, verdict: outcome.verdict)
            })
    }

    /// Gives a claimed batch back unsent (the transfer could not be started): its lease ends now, so the
    /// next sender takes it, with the same id and bytes. Does nothing if the lease no longer holds it.
    public func releaseTransfer(_ lease: BatchLease) async throws(UploaderError) {
        do {
            try await executor.commit { connection in
                try connection.execute(
                    """
                    UPDATE batch SET lease_until_ms = 0, lease_ms = 0, transfer = 0
                    WHERE batch_id = ? AND attempts = ? AND lease_until_ms != 0
                    """, [lease.batchId, lease.attempt])
            }
        } catch {
            throw UploaderError.storage(error, "releasing a transfer lease failed")
        }
    }

    /// Settles the finished transfers of the configured ``UploaderConfiguration/outOfProcessTransfer``
    /// (``OutOfProcessTransfer/settleFinished(on:)``); the foreground loop calls it on every step. Returns
    /// nothing when none is configured.
    @discardableResult
    public func settleFinishedTransfers() async throws(UploaderError) -> [TransferSettlement] {
        guard let outOfProcessTransfer else { return [] }
        return try await outOfProcessTransfer.settleFinished(on: self)
    }

    /// Claims the due batches of `route`, exports them and starts `transfer`; returns how many it took. A
    /// transfer that cannot start gets its leases released.
    func transfer(route: TransferRoute, to transfer: any OutOfProcessTransfer) async throws(UploaderError) -> Int {
        let batches = try await claimForTransfer(route: route)
        guard !batches.isEmpty else { return 0 }
        var exported: [ExportedTransfer] = []
        do throws(UploaderError) {
            for batch in batches {
                exported.append(try batch.export(into: transfer.exportDirectory))
            }
            try await transfer.start(exported)
        } catch {
            for batch in batches {
                try? await releaseTransfer(batch.lease)
            }
            throw error
        }
        return batches.count
    }
}

extension UploadOutcome {
    var verdict: TransferSettlement.Verdict {
        switch self {
        case .delivered(let duplicate): duplicate ? .duplicate : .delivered
        case .partiallyDelivered: .partiallyDelivered
        case .rejected: .rejected
        case .authenticationRequired: .authenticationRequired
        case .throttled: .throttled
        case .retryable: .retryLater
        }
    }
}
