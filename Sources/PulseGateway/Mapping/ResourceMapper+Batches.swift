import MsgTrans
import PulseJSON
import PulseProtocol

/// A resource's records split into Pulse batches: its crash batches, then its event batches.
extension ResourceMapper {
    func emit(
        _ collected: CollectedRecords, identity: ResolvedIdentity, resourceIndex: Int, into result: inout MappedRequest
    ) {
        let identityJSON = identity.batchIdentityJSON()
        let connect = identity.connectPayload()
        let key = ResolvedIdentity.key(connectPayload: connect)
        let app = context.appID
        let mappingContext = context
        func draft(_ batch: BatchSplitter.Batch, kind: OutboxBatchKind, fallback: [UInt8]?) -> OutboxDraft {
            OutboxDraft(
                app: app, identityKey: key, identity: connect, kind: kind, pulseBatchID: batch.batchID,
                payload: batch.payload,
                compression: StoredPayload.compression(forPlaintextOf: batch.payload.count).rawValue,
                recordCount: batch.count, fallback: fallback)
        }
        if !collected.crashes.isEmpty {
            let (batches, dropped) = BatchSplitter.crashes.split(identity: identityJSON, items: collected.crashes) {
                PulseBatchID.make(mappingContext, resourceIndex: resourceIndex, chunk: $0, crash: true)
            }
            result.rejected += dropped
            for batch in batches {
                var fallback: [UInt8] = []
                for position in batch.range {
                    collected.crashFallbacks.withBytes(position..<position + 1) {
                        EventChunks.append($0, to: &fallback)
                    }
                }
                result.drafts.append(draft(batch, kind: .crashes, fallback: fallback))
            }
        }
        if !collected.events.isEmpty {
            let (batches, dropped) = BatchSplitter.events.split(identity: identityJSON, items: collected.events) {
                PulseBatchID.make(mappingContext, resourceIndex: resourceIndex, chunk: $0, crash: false)
            }
            result.rejected += dropped
            for batch in batches { result.drafts.append(draft(batch, kind: .events, fallback: nil)) }
        }
    }
}
