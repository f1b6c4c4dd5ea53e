package import PulseCompression
public import PulseKit

/// How many decompression contexts the process created and reused
/// (``PayloadCompressor/contextStatistics``).
package typealias DecompressionContextStatistics = CompressionContextStatistics

/// One-shot compression and bounded, streaming decompression of whole msgtrans payloads, over the
/// project's one compression module (`PulseCompression`, whose bounded context pool every codec
/// user of the process shares).
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
/// Codec contexts (zstd `CCtx` and `DCtx`, zlib inflate streams) are reused from that shared pool
/// (at most 8 idle per kind; a zstd context that grew past 2 MiB is freed instead of kept), each
/// reset to a fresh session before use, so the limits above apply to every stream exactly as with
/// a new context; ``contextStatistics`` counts creations and reuses.
public enum PayloadCompressor {
    /// How many codec contexts were created and reused since the process started.
    package static var contextStatistics: DecompressionContextStatistics {
        CompressionContextPool.shared.statistics
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
        try transform(
            bytes, with: compression,
            zstd: { () throws(CompressionError) in try Zstd.compress(bytes, level: level ?? Zstd.defaultLevel) },
            zlib: { () throws(CompressionError) in
                try Zlib.compress(bytes, format: .zlib, level: level ?? Zlib.defaultLevel)
            })
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
        try transform(
            bytes, with: compression,
            zstd: { () throws(CompressionError) in
                try Zstd.decompress(
                    bytes, maxOutputBytes: maxOutputBytes,
                    windowLogMax: zstdWindowLogMax(forMaxOutputBytes: maxOutputBytes))
            },
            zlib: { () throws(CompressionError) in
                try Zlib.decompress(bytes, format: .zlib, maxOutputBytes: maxOutputBytes)
            })
    }

    /// `bytes` unchanged for `.none`, else what the codec's closure makes of them; a codec failure
    /// becomes the ``MsgTransError`` of the same code.
    private static func transform(
        _ bytes: [UInt8], with compression: Compression, zstd: () throws(CompressionError) -> [UInt8],
        zlib: () throws(CompressionError) -> [UInt8]
    ) throws(MsgTransError) -> [UInt8] {
        do throws(CompressionError) {
            switch compression {
            case .none: return bytes
            case .zstd: return try zstd()
            case .zlib: return try zlib()
            }
        } catch {
            throw MsgTransError(error)
        }
    }

    /// The largest zstd window (as a power of two) accepted when the output is bounded by
    /// `maxOutputBytes`: `ceil(log2(maxOutputBytes))` clamped to 21…27 (16 MiB of output gives
    /// 24); see `Zstd.windowLogMax(forMaxOutputBytes:)` in `PulseCompression`.
    public static func zstdWindowLogMax(forMaxOutputBytes maxOutputBytes: Int) -> Int32 {
        Zstd.windowLogMax(forMaxOutputBytes: maxOutputBytes)
    }
}

extension MsgTransError {
    /// The msgtrans payload error for a codec failure (same code, same message, same position).
    init(_ error: CompressionError) {
        let code: Code
        switch error.code {
        case .compressionFailed: code = .compressionFailed
        case .decompressionFailed: code = .decompressionFailed
        case .decompressedTooLarge: code = .decompressedTooLarge
        case .trailingBytes: code = .trailingBytes
        case .truncatedStream: code = .truncatedStream
        }
        self.init(code, error.message, file: error.file, line: error.line)
    }
}
