import CZstd
import Synchronization

/// zstd through libzstd: one-shot compression, bounded streaming decompression.
enum ZstdCodec {
    static let defaultLevel: Int32 = 3
    /// The magic number that starts every standard zstd frame.
    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// `ZSTD_CONTENTSIZE_ERROR`; `ZSTD_CONTENTSIZE_UNKNOWN` is the one value above it.
    private static let contentSizeError = UInt64.max - 1

    /// One standard frame of `bytes` at `level`, through a reused compression context.
    ///
    /// Creating a context costs about as much as compressing a few kilobytes, so contexts are
    /// kept in a small pool (``CompressionContexts``) instead of calling `ZSTD_compress`.
    static func compress(_ bytes: [UInt8], level: Int32) throws(MsgTransError) -> [UInt8] {
        let bound = ZSTD_compressBound(bytes.count)
        guard ZSTD_isError(bound) == 0 else {
            throw MsgTransError(.compressionFailed, "zstd: input of \(bytes.count) bytes is too large")
        }
        guard let context = contexts.take() else {
            throw MsgTransError(.compressionFailed, "zstd: cannot allocate a compression context")
        }
        defer { contexts.give(back: context) }
        var result = 0
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
            result = bytes.withUnsafeBytes { input in
                ZSTD_compressCCtx(context.pointer, out.baseAddress, out.count, input.baseAddress, input.count, level)
            }
            count = ZSTD_isError(result) == 0 ? result : 0
        }
        guard ZSTD_isError(result) == 0 else {
            throw MsgTransError(.compressionFailed, "zstd: \(errorName(result))")
        }
        return output
    }

    /// The process's reused compression contexts.
    static let contexts = CompressionContexts()

    static func decompress(_ input: [UInt8], maxOutputBytes: Int) throws(MsgTransError) -> [UInt8] {
        guard input.starts(with: magic) else {
            if magic.starts(with: input) {
                throw MsgTransError(.truncatedStream, "zstd: stream ends inside the frame magic")
            }
            throw MsgTransError(.decompressionFailed, "zstd: payload does not start with a standard frame magic")
        }
        // A frame that declares a larger content size is rejected before any work. The declared
        // size is only ever a reason to refuse, never an allocation size: frames that declare
        // nothing (or lie) are bounded by the streaming loop below.
        let declared = input.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        if declared < contentSizeError, declared > UInt64(maxOutputBytes) {
            throw tooLarge(maxOutputBytes)
        }
        return try DecompressionContextPool.shared.withZstdContext { context throws(MsgTransError) in
            let windowLogMax = PayloadCompressor.zstdWindowLogMax(forMaxOutputBytes: maxOutputBytes)
            let setResult = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
            guard ZSTD_isError(setResult) == 0 else {
                throw MsgTransError(.decompressionFailed, "zstd: \(errorName(setResult))")
            }
            return try BoundedOutputBuffer.decoding(input, maxBytes: maxOutputBytes) {
                raw, output throws(MsgTransError) in
                try decompress(raw, context: context, into: &output, maxOutputBytes: maxOutputBytes)
            }
        }
    }

    /// Runs the decoder over the whole input; returns once the single frame is complete.
    private static func decompress(
        _ raw: UnsafeRawBufferPointer, context: OpaquePointer, into output: inout BoundedOutputBuffer,
        maxOutputBytes: Int
    ) throws(MsgTransError) {
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
                throw MsgTransError(.decompressionFailed, "zstd: \(errorName(status))")
            }
            if output.count > maxOutputBytes {
                throw tooLarge(maxOutputBytes)
            }
            if status == 0 {
                // The frame is complete and flushed; zstd stops exactly at its end.
                if source.pos < source.size {
                    throw MsgTransError(
                        .trailingBytes, "zstd: \(source.size - source.pos) bytes follow the frame")
                }
                return
            }
            if source.pos == source.size && !wroteAll {
                throw MsgTransError(.truncatedStream, "zstd: stream ends inside the frame")
            }
        }
    }

    private static func tooLarge(_ maxOutputBytes: Int) -> MsgTransError {
        MsgTransError(.decompressedTooLarge, "zstd: output exceeds \(maxOutputBytes) bytes")
    }

    private static func errorName(_ code: Int) -> String {
        String(cString: ZSTD_getErrorName(code))
    }
}

/// A bounded pool of zstd compression contexts, each used by one caller at a time.
///
/// At most ``capacity`` idle contexts are kept (about 1.3 MiB each at level 3 for inputs up to
/// 128 KiB, less for smaller inputs and lower levels); callers beyond that create and free their
/// own, so memory stays bounded however many tasks compress at once. `ZSTD_compressCCtx` resets
/// the context's parameters on every call, so a context carries nothing from one payload to the
/// next.
final class CompressionContexts: Sendable {
    struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Idle contexts kept for reuse.
    static let capacity = 8
    private let idle = Mutex<[Context]>([])
    /// Contexts created so far (for tests: reuse keeps it at the number of concurrent callers).
    private let created = Atomic<Int>(0)

    var createdCount: Int { created.load(ordering: .relaxed) }

    deinit {
        for context in idle.withLock({ $0 }) { ZSTD_freeCCtx(context.pointer) }
    }

    func take() -> Context? {
        if let context = idle.withLock({ $0.popLast() }) { return context }
        guard let pointer = ZSTD_createCCtx() else { return nil }
        created.add(1, ordering: .relaxed)
        return Context(pointer: pointer)
    }

    func give(back context: Context) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < Self.capacity else { return false }
            idle.append(context)
            return true
        }
        if !kept { ZSTD_freeCCtx(context.pointer) }
    }
}
