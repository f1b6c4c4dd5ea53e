/// An output buffer for decompressors that never grows past a limit.
///
/// Capacity grows geometrically but is capped at the limit, so the memory held is bounded by the
/// limit itself; an append that would pass it is refused.

import PulseKit

struct DecodedOutput {
    private(set) var bytes: [UInt8] = []
    let limit: Int

    init(limit: Int, expected: Int) {
        self.limit = limit
        bytes.reserveCapacity(min(limit, max(expected, 1024)))
    }

    /// Appends `chunk`, or returns `false` (appending nothing) when it would pass the limit.
    mutating func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard !chunk.isEmpty else { return true }
        let needed = bytes.count + chunk.count
        guard needed <= limit else { return false }
        if needed > bytes.capacity {
            bytes.reserveCapacity(min(limit, max(needed, bytes.capacity * 2)))
        }
        bytes.append(contentsOf: chunk)
        return true
    }

    /// The error for an output that would pass the limit.
    var tooLarge: HTTPServerError {
        HTTPServerError(.bodyTooLarge, "decoded body exceeds \(limit) bytes")
    }
}
