import PulseHashing
import PulseKit

/// Deterministic Pulse batch ids.
enum PulseBatchID {
    /// The first 32 hex characters of SHA-256 of (app id, HTTP batch id, resource index, chunk
    /// index), with a fifth field `crash` for crash batches. A conflicting batch adds `conflict`
    /// and its body hash after the HTTP batch id (``MappingContext/updateBatchFields(_:)``).
    static func make(_ context: MappingContext, resourceIndex: Int, chunk: Int, crash: Bool) -> String {
        var hasher = SHA256()
        hasher.updateField(context.appID)
        context.updateBatchFields(&hasher)
        hasher.updateField(String(resourceIndex))
        hasher.updateField(String(chunk))
        if crash { hasher.updateField("crash") }
        // The hex of the digest's first bytes: cutting the `String` would walk its characters.
        return Hex.encode(hasher.finalize().prefix(BatchSplitter.batchIDLength / 2))
    }
}
