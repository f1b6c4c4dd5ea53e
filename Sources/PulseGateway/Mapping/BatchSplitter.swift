import PulseJSON
import PulseProtocol

/// Splits encoded items (events or crash reports) into Pulse batch envelopes, FIFO.
///
/// The envelope is `{"identity":<identity>,"<arrayKey>":[item,item,…],"batchId":"<id>"}`; each
/// batch takes the largest prefix of the remaining items that keeps at most `maxItems` items and
/// `maxBytes` bytes of envelope. An item that does not fit an envelope on its own is dropped and
/// counted. Batch ids have a fixed length, so sizes are exact before the id is known.
struct BatchSplitter {
    struct Batch: Equatable {
        var payload: [UInt8]
        /// The positions of the items in this batch (contiguous; dropped items are never inside).
        var range: Range<Int>
        var batchID: String

        var count: Int { range.count }
    }

    /// Events: 64 per batch, 65,536 bytes (``PulseLimits``, shared with the uploader's enqueue check).
    static let events = BatchSplitter(
        arrayKey: "events", maxItems: PulseLimits.eventBatchMaxEvents, maxBytes: PulseLimits.eventBatchMaxBytes)
    /// Crash reports: 16 per batch, 1 MiB.
    static let crashes = BatchSplitter(
        arrayKey: "crashes", maxItems: PulseLimits.crashBatchMaxCrashes, maxBytes: PulseLimits.crashBatchMaxBytes)

    /// The length of every Pulse batch id (hex characters).
    static let batchIDLength = 32
    /// A batch id's length of zeros, for measuring the envelope before the id is known (made once:
    /// `String(repeating:count:)` costs thousands of instructions per call).
    private static let placeholderID = String(repeating: "0", count: batchIDLength)

    let arrayKey: String
    let maxItems: Int
    let maxBytes: Int
    /// The size of an envelope without items and with an empty identity; the identity and the
    /// items are copied in as they are, so an envelope's size is this plus theirs.
    private let emptyEnvelopeSize: Int

    init(arrayKey: String, maxItems: Int, maxBytes: Int) {
        self.arrayKey = arrayKey
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        emptyEnvelopeSize =
            Self.envelope(
                arrayKey: arrayKey, identity: [], items: EncodedItems(capacity: 0), 0..<0, batchID: Self.placeholderID,
                capacity: 64
            ).count
    }

    /// The envelope (PulseProtocol's `pulseBatch`) of `identity` and the items in `range`.
    private static func envelope(
        arrayKey: String, identity: [UInt8], items: EncodedItems, _ range: Range<Int>, batchID: String, capacity: Int
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.pulseBatch(
            identity: { $0.raw(identity) }, itemsKey: arrayKey,
            items: { writer in
                // The items are stored comma-separated: a run of them is the array's contents.
                if !range.isEmpty { items.withBytes(range) { writer.raw(utf8: $0) } }
            }, batchId: batchID)
        return writer.bytes
    }

    /// Splits `items`; `batchID(chunk)` names chunk number `chunk` (0, 1, …) and must return
    /// ``batchIDLength`` characters.
    func split(
        identity: [UInt8], items: EncodedItems, batchID: (Int) -> String
    ) -> (batches: [Batch], dropped: Int) {
        // The envelope without items, with an id of the fixed length.
        let fixed = emptyEnvelopeSize + identity.count
        var batches: [Batch] = []
        var dropped = 0
        var start = 0
        var index = 0
        var size = fixed
        func emit(_ range: Range<Int>) {
            let id = batchID(batches.count)
            precondition(id.utf8.count == Self.batchIDLength, "Pulse batch ids have a fixed length")
            let payload = Self.envelope(
                arrayKey: arrayKey, identity: identity, items: items, range, batchID: id, capacity: size)
            batches.append(Batch(payload: payload, range: range, batchID: id))
        }
        while index < items.count {
            let itemSize = items.size(index)
            if fixed + itemSize > maxBytes {
                // Too large on its own: close the current batch, drop the item.
                if index > start { emit(start..<index) }
                dropped += 1
                index += 1
                start = index
                size = fixed
                continue
            }
            let added = itemSize + (index > start ? 1 : 0)
            if index - start == maxItems || size + added > maxBytes {
                emit(start..<index)
                start = index
                size = fixed + itemSize
            } else {
                size += added
            }
            index += 1
        }
        if index > start { emit(start..<index) }
        return (batches, dropped)
    }
}
