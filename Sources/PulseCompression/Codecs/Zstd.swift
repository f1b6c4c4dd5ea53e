import CZstd
import PulseKit

/// zstd (RFC 8878) through libzstd: one-shot compression and bounded, streaming decompression,
/// both through contexts reused from ``CompressionContextPool/shared``.
package enum Zstd {
    /// The level used unless told otherwise.
    package static let defaultLevel: Int32 = 3
    /// The magic number that starts every standard zstd frame.
    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// `ZSTD_CONTENTSIZE_ERROR`; `ZSTD_CONTENTSIZE_UNKNOWN` is the one value above it.
    private static let contentSizeError = UInt64.max - 1

    /// What a decompressor accepts.
    package enum Framing: Sendable {
        /// Exactly one standard frame (magic `28 b5 2f fd`): skippable frames, a second frame or
        /// any other trailing byte are rejected (msgtrans payloads, outbox rows).
        case singleFrame
        /// One or more frames back to back (RFC 8878 as HTTP `Content-Encoding: zstd` uses it).
        case concatenatedFrames
    }

    /// One standard frame of `bytes` (with its content size) at `level`, through a reused
    /// compression context.
    ///
    /// - Throws: ``CompressionError/Code/compressionFailed``.
    package static func compress(_ bytes: [UInt8], level: Int32 = defaultLevel) throws(CompressionError) -> [UInt8] {
        let bound = ZSTD_compressBound(bytes.count)
        guard ZSTD_isError(bound) == 0 else {
            throw CompressionError(.compressionFailed, "zstd: input of \(bytes.count) bytes is too large")
        }
        return try CompressionContextPool.shared.withZstdCompressionContext { context throws(CompressionError) in
            var result = 0
            let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
                result = bytes.withUnsafeBytes { input in
                    ZSTD_compressCCtx(context, out.baseAddress, out.count, input.baseAddress, input.count, level)
                }
                count = ZSTD_isError(result) == 0 ? result : 0
            }
            guard ZSTD_isError(result) == 0 else {
                throw CompressionError(.compressionFailed, "zstd: \(errorName(result))")
            }
            return output
        }
    }

    /// Decompresses `input`, producing at most `maxOutputBytes`, with the decoder's window capped
    /// at `2^windowLogMax` (so a hostile frame header cannot make it reserve more memory).
    ///
    /// Writes into a buffer that grows in steps and never beyond `maxOutputBytes + 1` bytes.
    /// Sizes declared inside a frame are never used to allocate; a frame that declares a content
    /// size above the limit is refused before decoding starts.
    ///
    /// - Throws: ``CompressionError`` with `decompressionFailed` (not a valid stream, or a window
    ///   over the cap), `decompressedTooLarge`, `trailingBytes` (``Framing/singleFrame`` only) or
    ///   `truncatedStream`.
    package static func decompress(
        _ input: [UInt8], maxOutputBytes: Int, windowLogMax: Int32, framing: Framing = .singleFrame
    ) throws(CompressionError) -> [UInt8] {
        let maxOutputBytes = max(maxOutputBytes, 0)
        // Concatenated frames may start with a skippable frame; the decoder judges those.
        guard framing == .concatenatedFrames || input.starts(with: magic) else {
            if magic.starts(with: input) {
                throw CompressionError(.truncatedStream, "zstd: stream ends inside the frame magic")
            }
            throw CompressionError(.decompressionFailed, "zstd: payload does not start with a standard frame magic")
        }
        // A frame that declares a larger content size is rejected before any work. The declared
        // size is only ever a reason to refuse, never an allocation size: frames that declare
        // nothing (or lie) are bounded by the streaming loop below.
        let declared = input.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        if declared < contentSizeError, declared > UInt64(maxOutputBytes) {
            throw tooLarge(maxOutputBytes)
        }
        return try CompressionContextPool.shared.withZstdContext { context throws(CompressionError) in
            let setResult = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
            guard ZSTD_isError(setResult) == 0 else {
                throw CompressionError(.decompressionFailed, "zstd: \(errorName(setResult))")
            }
            return try BoundedOutputBuffer.decoding(input, maxBytes: maxOutputBytes) {
                raw, output throws(CompressionError) in
                try decompress(raw, context: context, into: &output, maxOutputBytes: maxOutputBytes, framing: framing)
            }
        }
    }

    /// Runs the decoder over the whole input; returns once the (last) frame is complete.
    private static func decompress(
        _ raw: UnsafeRawBufferPointer, context: OpaquePointer, into output: inout BoundedOutputBuffer,
        maxOutputBytes: Int, framing: Framing
    ) throws(CompressionError) {
        var source = ZSTD_inBuffer(src: raw.baseAddress, size: raw.count, pos: 0)
        while true {
            if output.isFull && !output.grow() {
                throw tooLarge(maxOutputBytes)
            }
            let (status, wroteAll) = output.fill { destination, space in
                var sink = ZSTD_outBuffer(dst: destination, size: space, pos: 0)
                let status = ZSTD_decompressStream(context, &sink, &source)
                return ((status, sink.pos == space), sink.pos)
            }
            guard ZSTD_isError(status) == 0 else {
                throw CompressionError(.decompressionFailed, "zstd: \(errorName(status))")
            }
            if output.count > maxOutputBytes {
                throw tooLarge(maxOutputBytes)
            }
            if status == 0 {
                // A frame is complete and flushed; zstd stops exactly at its end.
                if source.pos == source.size { return }
                if framing == .singleFrame {
                    throw CompressionError(.trailingBytes, "zstd: \(source.size - source.pos) bytes follow the frame")
                }
                // Another frame follows: the decoder starts it on the next call.
                continue
            }
            if source.pos == source.size && !wroteAll {
                throw CompressionError(.truncatedStream, "zstd: stream ends inside the frame")
            }
        }
    }

    /// The largest zstd window (as a power of two) worth accepting when the output is bounded by
    /// `maxOutputBytes`.
    ///
    /// A window larger than the whole permitted output is never needed, so the cap is
    /// `ceil(log2(maxOutputBytes))`, but at least 21 (2 MiB, what a streaming zstd encoder at
    /// level 3 declares when it does not know the input size, so small limits still accept such
    /// streams) and at most 27 (zstd's own default limit). 16 MiB of output gives 24.
    package static func windowLogMax(forMaxOutputBytes maxOutputBytes: Int) -> Int32 {
        var log: Int32 = 0
        while log < 27 && (1 << log) < maxOutputBytes {
            log += 1
        }
        return min(max(log, 21), 27)
    }

    private static func tooLarge(_ maxOutputBytes: Int) -> CompressionError {
        CompressionError(.decompressedTooLarge, "zstd: output exceeds \(maxOutputBytes) bytes")
    }

    private static func errorName(_ code: Int) -> String {
        String(cString: ZSTD_getErrorName(code))
    }
}
