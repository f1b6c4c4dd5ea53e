/// A growable output buffer for streaming decompression that never grows past `maxBytes + 1`.
///
/// The single byte of slack lets a decoder prove that a stream produces more than `maxBytes`
/// without allocating for the rest of it.
struct BoundedOutputBuffer {
    /// The hard capacity: one more than the permitted output.
    let capacityLimit: Int
    private var storage: [UInt8]
    /// Bytes written so far.
    private(set) var count = 0

    /// Runs `decode` over the bytes of `input` with a buffer bounded by `maxBytes` and returns
    /// what it wrote (the frame both codecs' decompressors share).
    static func decoding(
        _ input: [UInt8], maxBytes: Int,
        _ decode: (UnsafeRawBufferPointer, inout BoundedOutputBuffer) throws(CompressionError) -> Void
    ) throws(CompressionError) -> [UInt8] {
        var output = BoundedOutputBuffer(maxBytes: maxBytes, inputCount: input.count)
        let outcome = input.withUnsafeBytes { raw in
            Result { () throws(CompressionError) in try decode(raw, &output) }
        }
        try outcome.get()
        return output.finish()
    }

    init(maxBytes: Int, inputCount: Int) {
        capacityLimit = maxBytes == Int.max ? Int.max : max(maxBytes, 0) + 1
        // Start small: about four times the input, between 4 KiB and 1 MiB.
        let guess = min(max(inputCount, 1024), 1 << 18) * 4
        storage = Self.allocate(min(capacityLimit, guess), keeping: [], count: 0)
    }

    /// An array of `size` bytes whose first `count` bytes are copied from `old`.
    ///
    /// The rest is left uninitialized rather than zero-filled: `UInt8` is a trivial type, and
    /// nothing past `count` is ever read (``finish()`` drops it), so zeroing would only cost time.
    private static func allocate(_ size: Int, keeping old: [UInt8], count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, initializedCount in
            if count > 0 {
                old.withUnsafeBytes { source in
                    UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
                        from: source.baseAddress!, byteCount: count)
                }
            }
            initializedCount = size
        }
    }

    /// Whether every allocated byte has been written.
    var isFull: Bool { count == storage.count }

    /// Doubles the allocation, up to ``capacityLimit``. Returns `false` if already at the limit.
    mutating func grow() -> Bool {
        let current = storage.count
        guard current < capacityLimit else { return false }
        let doubled = current > capacityLimit / 2 ? capacityLimit : current * 2
        storage = Self.allocate(doubled, keeping: storage, count: count)
        return true
    }

    /// Lets `body` write into the free space and records how many bytes it wrote.
    ///
    /// `body` receives the start of the free space and its size and returns its result together
    /// with the number of bytes written (at most the size it was given).
    mutating func fill<R>(_ body: (UnsafeMutablePointer<UInt8>, Int) -> (result: R, written: Int)) -> R {
        let start = count
        let (result, written) = storage.withUnsafeMutableBufferPointer { buffer in
            body(buffer.baseAddress! + start, buffer.count - start)
        }
        count = start + written
        return result
    }

    /// The written bytes.
    consuming func finish() -> [UInt8] {
        storage.removeSubrange(count...)
        return storage
    }
}
