public import PulseJSON
public import PulseKit

/// `CLIENT_EVENT_BATCH_UPLOAD` (biz type 5) request: one identity and an ordered, non-empty event
/// array. Success data is `true`, sent only after durable acceptance.
///
/// Wire keys in canonical order: `identity`, `events`, `batchId`; all required. `batchId` is stable for
/// the lifetime of the sender's outbox row and survives retries. Decoding (both codecs) rejects an
/// empty `events` array and any unknown event kind, so one bad record rejects the whole batch.
///
/// ``encodeJSON()`` and ``init(decodingJSON:)`` are the fast, Foundation-free codecs for this hot path.
public struct EventBatch: Sendable, Hashable, PulseJSONCodable {
    /// The identity of the whole batch.
    public var identity: BatchIdentity
    /// The events in queue order.
    public var events: [PulseEvent]
    /// The stable batch identifier.
    public var batchId: String

    /// Creates a batch.
    public init(identity: BatchIdentity, events: [PulseEvent], batchId: String) {
        self.identity = identity
        self.events = events
        self.batchId = batchId
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        (identity, events, batchId) = try Self.rules.decode(node)
    }

    public func writeJSON(to writer: inout JSONWriter) {
        Self.rules.write(identity, events, batchId, to: &writer)
    }

    /// The canonical JSON bytes (fast path; no Foundation).
    public func encodeJSON() -> [UInt8] {
        Self.rules.encode(identity, events, batchId)
    }

    static let rules = PulseBatchRules(itemsKey: "events", item: "event", bytesPerItem: 512)
}

/// A `CLIENT_EVENT_BATCH_UPLOAD` request read with exactly the rules of ``EventBatch`` (the same
/// payloads are accepted, with the same errors), each event reduced to a ``PulseEventSummary``:
/// for a receiver that stores the events' bytes as received and only needs what it indexes.
public struct EventBatchSummary: Sendable, Hashable {
    /// The identity of the whole batch.
    public var identity: BatchIdentity
    /// The events in queue order.
    public var events: [PulseEventSummary]
    /// The stable batch identifier.
    public var batchId: String

    /// Reads a batch from a parsed JSON node.
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        (identity, events, batchId) = try EventBatch.rules.decode(node)
    }

    /// Parses `bytes` with `parser` and reads a batch, with the errors of
    /// ``EventBatch``'s `init(decodingJSON:parser:)`.
    public init(decodingJSON bytes: [UInt8], parser: JSONParser) throws(PulseProtocolError) {
        self = try decodeDocument(bytes, parser: parser) { node throws(PulseProtocolError) in
            try EventBatchSummary(jsonNode: node)
        }
    }
}
