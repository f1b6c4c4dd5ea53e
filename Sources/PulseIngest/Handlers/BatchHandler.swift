import MsgTransRuntime
import PulseProtocol
import PulseStorage

extension PulseSession {
    /// CLIENT_EVENT_BATCH_UPLOAD: decoded with the fast codec, checked against the connected
    /// identity, committed durably (group commit) and only then acknowledged. A replay (same
    /// batchId, or events already stored) stores nothing twice and is acknowledged the same way.
    func handleEventBatch(_ payload: [UInt8], identity: SessionIdentity) async -> MsgTransReply {
        await handleBatch(payload, as: "CLIENT_EVENT_BATCH_UPLOAD", identity: identity, PayloadCoding.decodeEventBatch)
        {
            let outcome = try await self.core.store.storeEvents($0)
            self.core.counters.recordEventBatch(app: identity.appId, outcome: outcome)
        }
    }

    /// CLIENT_CRASH_BATCH_UPLOAD: like event batches, deduplicated by batchId and by
    /// (app, `app.crash.id`).
    func handleCrashBatch(_ payload: [UInt8], identity: SessionIdentity) async -> MsgTransReply {
        await handleBatch(payload, as: "CLIENT_CRASH_BATCH_UPLOAD", identity: identity, PayloadCoding.decodeCrashBatch)
        {
            let outcome = try await self.core.store.storeCrashes($0)
            self.core.counters.recordCrashBatch(app: identity.appId, outcome: outcome)
        }
    }

    /// A batch upload named `packet`: `decode` (given the payload and the connection ID), the
    /// identity check, then `store` in a slot of the bounded ingest queue.
    private func handleBatch<Item>(
        _ payload: [UInt8], as packet: String, identity: SessionIdentity,
        _ decode: ([UInt8], String) throws(PulseProtocolError) -> BatchRecord<Item>,
        store: @escaping @Sendable (BatchRecord<Item>) async throws -> Void
    ) async -> MsgTransReply {
        await decoding(
            payload, as: packet,
            { payload throws(PulseProtocolError) in
                try decode(payload, identity.connectionId)
            },
            handle: { batch in
                if let refusal = checkBatch(batch.identity, against: identity) {
                    return refusal
                }
                return await commit { try await store(batch) }
            })
    }

    /// 403 when the batch's identity differs from the connected one in app, package, device,
    /// installation, platform or SDK version (or the app is no longer allowed); `nil` when it matches.
    private func checkBatch(_ batch: StoredIdentity, against identity: SessionIdentity) -> MsgTransReply? {
        let mismatches: [(String, Bool)] = [
            ("projectId", batch.appId == identity.appId),
            ("packageName", batch.packageName == identity.packageName),
            ("deviceId", batch.deviceId == identity.deviceId),
            ("installationId", batch.installationId == identity.installationId),
            ("platform", batch.platform == identity.platform),
            ("sdkVersion", batch.sdkVersion == identity.sdkVersion),
        ]
        if let field = mismatches.first(where: { !$0.1 }) {
            return core.reject(.forbidden, "batch identity \(field.0) differs from the connected identity")
        }
        if core.policy.app(identity.appId) == nil {
            return core.reject(.forbidden, "app \(PayloadCoding.quoted(identity.appId)) is no longer allowed")
        }
        return nil
    }

    /// Takes a slot of the bounded ingest queue (429 when full), runs the commit and acknowledges
    /// it; a storage failure is 503.
    private func commit(_ work: @Sendable () async throws -> Void) async -> MsgTransReply {
        guard core.pending.tryAcquire() else {
            return core.reject(.tooManyRequests, "ingest queue full, retry with backoff")
        }
        defer { core.pending.release() }
        do {
            try await work()
            return Envelope.accepted
        } catch {
            return core.reject(.unavailable, "durable storage unavailable, retry with backoff")
        }
    }
}
