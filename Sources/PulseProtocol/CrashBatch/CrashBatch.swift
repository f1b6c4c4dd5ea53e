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
        let o = try JSONObjectReader(node)
        identity = try o.object("identity") { node throws(PulseProtocolError) in try BatchIdentity(jsonNode: node) }
        guard let elements = try o.optionalArray("crashes") else {
            throw PulseProtocolError(.missingField, "crashes: required field is missing")
        }
        var crashes: [CrashReport] = []
        for (index, element) in elements.enumerated() {
            do {
                crashes.append(try CrashReport(jsonNode: element))
            } catch {
                throw error.at("crashes[\(index)]")
            }
        }
        if crashes.isEmpty {
            throw Self.emptyCrashes
        }
        self.crashes = crashes
        batchId = try o.string("batchId")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.pulseBatch(
            identity: { identity.writeJSON(to: &$0) }, itemsKey: "crashes",
            items: { writer in
                for crash in crashes { crash.writeJSON(to: &writer) }
            }, batchId: batchId)
    }

    /// The canonical JSON bytes (fast path; no Foundation).
    public func encodeJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 4096 * max(crashes.count, 1))
        writeJSON(to: &writer)
        return writer.bytes
    }

    private static let emptyCrashes = PulseProtocolError(
        .invalidValue, "crashes: a batch must contain at least one crash")
}
