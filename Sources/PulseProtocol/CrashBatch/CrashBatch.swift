public import PulseJSON
public import PulseKit

/// `CLIENT_CRASH_BATCH_UPLOAD` (biz type 4) request: one identity and an ordered, non-empty array of
/// crash reports. Success data is `true`, sent only after durable acceptance into the crash queue.
///
/// Wire keys in canonical order: `identity`, `crashes`, `batchId`; all required. The identity is the
/// same ``BatchIdentity`` as in event batches and must match the connected identity. Crash batches
/// have their own, larger limits (``PulseLimits``). Crash events inside event batches remain valid.
///
/// ``encodeJSON()`` and ``init(decodingJSON:)`` are the fast, Foundation-free codecs.
public struct CrashBatch: Sendable, Hashable, PulseJSONCodable {
    /// The identity of the whole batch.
    public var identity: BatchIdentity
    /// The crashes, oldest first.
    public var crashes: [CrashReport]
    /// The stable batch identifier, surviving retries.
    public var batchId: String

    /// Creates a batch.
    public init(identity: BatchIdentity, crashes: [CrashReport], batchId: String) {
        self.identity = identity
        self.crashes = crashes
        self.batchId = batchId
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        (identity, crashes, batchId) = try Self.rules.decode(node)
    }

    public func writeJSON(to writer: inout JSONWriter) {
        Self.rules.write(identity, crashes, batchId, to: &writer)
    }

    /// The canonical JSON bytes (fast path; no Foundation).
    public func encodeJSON() -> [UInt8] {
        Self.rules.encode(identity, crashes, batchId)
    }

    static let rules = PulseBatchRules(itemsKey: "crashes", item: "crash", bytesPerItem: 4096)
}
