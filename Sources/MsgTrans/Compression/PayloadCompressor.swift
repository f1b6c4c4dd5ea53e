/// One-shot compression and bounded, streaming decompression of whole payloads: the one
/// compression module of the project (msgtrans frames, the gateway's outbox rows).
///
/// zstd compression reuses a bounded pool of contexts (at most 8 kept idle), so compressing many
/// small payloads does not pay for a fresh `ZSTD_compress` context each time.
///
/// - zstd: output is exactly one standard frame (magic `28 b5 2f fd`) with its content size, at
///   level 3 unless told otherwise. Input must be exactly one standard frame: skippable frames,
///   a second frame or any other trailing byte are rejected.
/// - zlib: output is one RFC 1950 stream at the zlib default level (header `78 9c`). Input may
///   use any valid zlib header; gzip and raw deflate are rejected, and so are preset dictionaries.
///
/// Decompression writes into a buffer that grows in steps and never beyond
/// `maxOutputBytes + 1` bytes; reaching the extra byte proves the stream is too large. Sizes
/// declared inside the stream are never used to allocate; a zstd frame that declares a content
/// size above the limit is refused before decoding starts. The zstd decoder's window is capped
/// as well (see ``zstdWindowLogMax(forMaxOutputBytes:)``), so a hostile frame header cannot make
/// it reserve more memory than the output bound justifies.
///
/// Decompression contexts (zstd `DCtx`, zlib inflate streams) are reused from a small shared pool
/// (at most 8 idle per codec; a zstd context that grew past 1 MiB is freed instead of kept), each
/// reset to a fresh session before use, so the limits above apply to every stream exactly as with
/// a new context; ``contextStatistics`` counts creations and reuses.
public enum PayloadCompressor {
    /// How many decompression contexts were created and reused since the process started.
    public static var contextStatistics: DecompressionContextStatistics {
        DecompressionContextPool.shared.statistics
    }

    /// Compresses `bytes` with `compression`.
    ///
    /// - Parameter level: the codec level, or `nil` for the codec's default (zstd 3, zlib
    ///   `Z_DEFAULT_COMPRESSION`). Ignored for `.none`.
    /// - Returns: the compressed stream, or `bytes` unchanged for `.none`.
    /// - Throws: ``MsgTransError/Code/compressionFailed``.
    public static func compress(
        _ bytes: [UInt8], with compression: Compression, level: Int32? = nil
    ) throws(MsgTransError) -> [UInt8] {
        switch compression {
        case .none:
            return bytes
        case .zstd:
            return try ZstdCodec.compress(bytes, level: level ?? ZstdCodec.defaultLevel)
        case .zlib:
            return try ZlibCodec.compress(bytes, level: level ?? ZlibCodec.defaultLevel)
        }
    }

    /// Decompresses one complete stream of `compression`, producing at most `maxOutputBytes`.
    ///
    /// - Returns: the plaintext, or `bytes` unchanged for `.none` (no limit applies to it).
    /// - Throws: ``MsgTransError/Code/decompressionFailed`` for a stream that is not valid for the
    ///   codec, ``MsgTransError/Code/decompressedTooLarge`` when the output would exceed
    ///   `maxOutputBytes`, ``MsgTransError/Code/trailingBytes`` when bytes follow the end of the
    ///   stream and ``MsgTransError/Code/truncatedStream`` when the input ends inside the stream.
    public static func decompress(
        _ bytes: [UInt8], with compression: Compression, maxOutputBytes: Int
    ) throws(MsgTransError) -> [UInt8] {
        switch compression {
        case .none:
            return bytes
        case .zstd:
            return try ZstdCodec.decompress(bytes, maxOutputBytes: max(maxOutputBytes, 0))
        case .zlib:
            return try ZlibCodec.decompress(bytes, maxOutputBytes: max(maxOutputBytes, 0))
        }
    }

    /// The largest zstd window (as a power of two) accepted when the output is bounded by
    /// `maxOutputBytes`.
    ///
    /// A window larger than the whole permitted output is never needed, so the cap is
    /// `ceil(log2(maxOutputBytes))`, but at least 21 (2 MiB, what a streaming zstd encoder at
    /// level 3 declares when it does not know the input size, so small limits still accept such
    /// streams) and at most 27 (zstd's own default limit). 16 MiB of output gives 24.
    public static func zstdWindowLogMax(forMaxOutputBytes maxOutputBytes: Int) -> Int32 {
        var log: Int32 = 0
        while log < 27 && (1 << log) < maxOutputBytes {
            log += 1
        }
        return min(max(log, 21), 27)
    }
}
