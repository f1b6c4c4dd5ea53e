import PulseJSON

/// Encoded items (events or crash reports) in record order, in one buffer: each is written by
/// the one ``JSONWriter`` right after the one before, so that the writer puts a comma between
/// them and a run of items is already the contents of a JSON array (spliced into a batch envelope
/// with one copy, ``BatchSplitter``). No item has a buffer of its own.
struct EncodedItems {
    /// The items, comma-separated.
    private var writer: JSONWriter
    /// Where each item ends in the writer's output (the next one starts after a comma).
    private var ends: [Int] = []

    /// Room for `capacity` bytes and `count` items before the buffers must grow.
    init(capacity: Int, count: Int = 0) {
        writer = JSONWriter(capacity: capacity)
        ends.reserveCapacity(count)
    }

    /// The items of `encoded`, in order.
    init(_ encoded: [[UInt8]]) {
        self.init(capacity: encoded.reduce(0) { $0 + $1.count + 1 })
        for item in encoded { append { $0.raw(item) } }
    }

    var count: Int { ends.count }
    var isEmpty: Bool { ends.isEmpty }

    /// Appends the one JSON value that `body` writes.
    mutating func append(_ body: (inout JSONWriter) -> Void) {
        body(&writer)
        ends.append(writer.count)
    }

    /// Where item `index` starts.
    private func start(_ index: Int) -> Int { index == 0 ? 0 : ends[index - 1] + 1 }

    /// The size of item `index` in bytes.
    func size(_ index: Int) -> Int { ends[index] - start(index) }

    /// Calls `body` with the items in `range` as they are stored: their bytes separated by commas.
    func withBytes<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let from = range.isEmpty ? 0 : start(range.lowerBound)
        let to = range.isEmpty ? 0 : ends[range.upperBound - 1]
        return writer.withBytes { body(UnsafeBufferPointer(rebasing: $0[from..<to])) }
    }
}
