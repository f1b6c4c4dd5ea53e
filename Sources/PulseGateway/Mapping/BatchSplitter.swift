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

    var arrayKey: String
    var maxItems: Int
    var maxBytes: Int

    /// Splits `items`; `batchID(chunk)` names chunk number `chunk` (0, 1, …) and must return
    /// ``batchIDLength`` characters.
    func split(
        identity: [UInt8], items: [[UInt8]], batchID: (Int) -> String
    ) -> (batches: [Batch], dropped: Int) {
        let prefix = Array("{\"identity\":".utf8) + identity + Array(",\"\(arrayKey)\":[".utf8)
        let suffixHead = Array("],\"batchId\":\"".utf8)
        let suffixTail = Array("\"}".utf8)
        let fixed = prefix.count + suffixHead.count + Self.batchIDLength + suffixTail.count
        var batches: [Batch] = []
        var dropped = 0
        var start = 0
        var index = 0
        var size = fixed
        func emit(_ range: Range<Int>) {
            var payload = [UInt8]()
            payload.reserveCapacity(size)
            payload.append(contentsOf: prefix)
            for position in range {
                if position > range.lowerBound { payload.append(0x2C) }
                payload.append(contentsOf: items[position])
            }
            let id = batchID(batches.count)
            precondition(id.utf8.count == Self.batchIDLength, "Pulse batch ids have a fixed length")
            payload.append(contentsOf: suffixHead)
            payload.append(contentsOf: Array(id.utf8))
            payload.append(contentsOf: suffixTail)
            batches.append(Batch(payload: payload, range: range, batchID: id))
        }
        while index < items.count {
            let item = items[index]
            if fixed + item.count > maxBytes {
                // Too large on its own: close the current batch, drop the item.
                if index > start { emit(start..<index) }
                dropped += 1
                index += 1
                start = index
                size = fixed
                continue
            }
            let added = item.count + (index > start ? 1 : 0)
            if index - start == maxItems || size + added > maxBytes {
                emit(start..<index)
                start = index
                size = fixed + item.count
            } else {
                size += added
            }
            index += 1
        }
        if index > start { emit(start..<index) }
        return (batches, dropped)
    }
}
