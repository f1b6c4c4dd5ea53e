/// A list of encoded events stored in one blob: each as a 4-byte big-endian length and its bytes.
enum EventChunks {
    static func append(_ event: UnsafeBufferPointer<UInt8>, to blob: inout [UInt8]) {
        let count = UInt32(event.count)
        blob.append(UInt8(truncatingIfNeeded: count >> 24))
        blob.append(UInt8(truncatingIfNeeded: count >> 16))
        blob.append(UInt8(truncatingIfNeeded: count >> 8))
        blob.append(UInt8(truncatingIfNeeded: count))
        blob.append(contentsOf: event)
    }

    /// The events of a blob; `nil` when it is malformed.
    static func split(_ blob: [UInt8]) -> [[UInt8]]? {
        var events: [[UInt8]] = []
        var index = 0
        while index < blob.count {
            guard index + 4 <= blob.count else { return nil }
            let count =
                Int(blob[index]) << 24 | Int(blob[index + 1]) << 16 | Int(blob[index + 2]) << 8 | Int(blob[index + 3])
            index += 4
            guard index + count <= blob.count else { return nil }
            events.append(Array(blob[index..<index + count]))
            index += count
        }
        return events
    }
}
