import CZlib
import CZstd
import Synchronization

/// How often the codecs created a context and how often they reused one
/// (``CompressionContextPool/statistics``).
public struct CompressionContextStatistics: Sendable, Equatable {
    /// zstd decompression contexts created (`ZSTD_createDCtx`).
    public var zstdContextsCreated = 0
    /// zstd decompressions that reused a pooled context.
    public var zstdContextsReused = 0
    /// zlib inflate streams created (`inflateInit2`).
    public var zlibStreamsCreated = 0
    /// zlib decompressions that reused a pooled stream (`inflateReset2`).
    public var zlibStreamsReused = 0
    /// zstd compression contexts created (`ZSTD_createCCtx`).
    public var zstdCompressionContextsCreated = 0
    /// zstd compressions that reused a pooled context.
    public var zstdCompressionContextsReused = 0

    /// Creates zeroed statistics.
    public init() {}
}

/// The one bounded pool of idle codec contexts of the process, shared by everything that
/// compresses or decompresses (msgtrans frames, the gateway's outbox rows, HTTP request bodies,
/// the uploader's batch bodies), so a payload does not pay for allocating and initialising a codec
/// (a zstd `DCtx` is ~100 KiB of tables, a `CCtx` at level 3 about 1.3 MiB) every time.
///
/// A caller takes a context (or creates one), uses it alone, and gives it back when done,
/// whatever the outcome; decompression contexts are reset to a fresh session first (parameters
/// included, so the caller's bounds are applied again every time), and `ZSTD_compressCCtx` resets
/// a compression context's parameters on every call. Bounded: at most ``maximumIdle`` contexts of
/// each kind are kept, and a zstd context that grew beyond ``maximumRetainedBytes`` (a large
/// window) is freed instead of kept, so the pool never holds more than
/// `maximumIdle × maximumRetainedBytes` per kind however large the streams were. Callers beyond
/// the idle count create and free their own.
public final class CompressionContextPool: Sendable {
    /// The most idle contexts kept per kind.
    public static let maximumIdle = 8
    /// A zstd context larger than this (`ZSTD_sizeof_DCtx`, `ZSTD_sizeof_CCtx`) is freed rather
    /// than kept.
    public static let maximumRetainedBytes = 2 << 20

    /// An idle context; only ever used by the one caller that took it out of the pool.
    private struct Idle<Pointer>: @unchecked Sendable {
        let pointer: Pointer
    }

    private struct State {
        var zstd: [Idle<OpaquePointer>] = []
        var zstdCompression: [Idle<OpaquePointer>] = []
        var zlib: [Idle<UnsafeMutablePointer<z_stream>>] = []
        var statistics = CompressionContextStatistics()
    }

    private let state = Mutex(State())

    /// The pool every codec of the process shares.
    public static let shared = CompressionContextPool()

    /// Creations and reuses so far.
    public var statistics: CompressionContextStatistics {
        state.withLock { $0.statistics }
    }

    /// The idle contexts kept now, per kind, and the size of the largest idle zstd decompression
    /// context (for tests of the bounds).
    public var idle: (zstd: Int, zlib: Int, zstdCompression: Int, largestZstdBytes: Int) {
        state.withLock { state in
            (
                state.zstd.count, state.zlib.count, state.zstdCompression.count,
                state.zstd.map { ZSTD_sizeof_DCtx($0.pointer) }.max() ?? 0
            )
        }
    }

    deinit {
        state.withLock { state in
            for context in state.zstd { ZSTD_freeDCtx(context.pointer) }
            for context in state.zstdCompression { ZSTD_freeCCtx(context.pointer) }
            for stream in state.zlib { Self.free(zlib: stream.pointer) }
        }
    }

    // MARK: zstd compression

    /// Runs `body` with a zstd compression context (its parameters are set by the call that uses
    /// it: `ZSTD_compressCCtx` resets them).
    func withZstdCompressionContext<R>(
        _ body: (OpaquePointer) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        let pooled = state.withLock { state -> Idle<OpaquePointer>? in
            let context = state.zstdCompression.popLast()
            if context != nil { state.statistics.zstdCompressionContextsReused += 1 }
            return context
        }?.pointer
        let context: OpaquePointer
        if let pooled {
            context = pooled
        } else {
            guard let created = ZSTD_createCCtx() else {
                throw CompressionError(.compressionFailed, "zstd: cannot allocate a compression context")
            }
            state.withLock { $0.statistics.zstdCompressionContextsCreated += 1 }
            context = created
        }
        defer {
            let keep =
                ZSTD_sizeof_CCtx(context) <= Self.maximumRetainedBytes
                && state.withLock { state -> Bool in
                    guard state.zstdCompression.count < Self.maximumIdle else { return false }
                    state.zstdCompression.append(Idle(pointer: context))
                    return true
                }
            if !keep { ZSTD_freeCCtx(context) }
        }
        return try body(context)
    }

    // MARK: zstd decompression

    /// Runs `body` with a zstd decompression context reset to a fresh session with default
    /// parameters.
    func withZstdContext<R>(
        _ body: (OpaquePointer) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        let pooled = state.withLock { state -> Idle<OpaquePointer>? in
            let context = state.zstd.popLast()
            if context != nil { state.statistics.zstdContextsReused += 1 }
            return context
        }?.pointer
        let context: OpaquePointer
        if let pooled {
            let reset = ZSTD_DCtx_reset(pooled, ZSTD_reset_session_and_parameters)
            guard ZSTD_isError(reset) == 0 else {
                ZSTD_freeDCtx(pooled)
                throw CompressionError(.decompressionFailed, "zstd: cannot reset a decompression context")
            }
            context = pooled
        } else {
            guard let created = ZSTD_createDCtx() else {
                throw CompressionError(.decompressionFailed, "zstd: cannot allocate a decompression context")
            }
            state.withLock { $0.statistics.zstdContextsCreated += 1 }
            context = created
        }
        defer {
            let keep =
                ZSTD_sizeof_DCtx(context) <= Self.maximumRetainedBytes
                && state.withLock { state -> Bool in
                    guard state.zstd.count < Self.maximumIdle else { return false }
                    state.zstd.append(Idle(pointer: context))
                    return true
                }
            if !keep { ZSTD_freeDCtx(context) }
        }
        return try body(context)
    }

    // MARK: zlib inflate

    /// Runs `body` with an inflate stream initialised for `windowBits` (15 zlib, 31 gzip, -15 raw
    /// deflate), fresh state.
    ///
    /// The stream lives at a fixed address (zlib keeps a pointer back to it).
    func withInflateStream<R>(
        windowBits: Int32, _ body: (UnsafeMutablePointer<z_stream>) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        let pooled = state.withLock { state -> Idle<UnsafeMutablePointer<z_stream>>? in
            let stream = state.zlib.popLast()
            if stream != nil { state.statistics.zlibStreamsReused += 1 }
            return stream
        }?.pointer
        let stream: UnsafeMutablePointer<z_stream>
        if let pooled {
            guard inflateReset2(pooled, windowBits) == Z_OK else {
                Self.free(zlib: pooled)
                throw CompressionError(.decompressionFailed, "zlib: cannot reset an inflate stream")
            }
            stream = pooled
        } else {
            let created = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            created.initialize(to: z_stream())
            let initStatus = inflateInit2_(created, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
            guard initStatus == Z_OK else {
                created.deinitialize(count: 1)
                created.deallocate()
                throw CompressionError(.decompressionFailed, "zlib: inflateInit2 returned \(initStatus)")
            }
            state.withLock { $0.statistics.zlibStreamsCreated += 1 }
            stream = created
        }
        defer {
            // An inflate stream's window is at most 32 KiB: always small enough to keep.
            let keep = state.withLock { state -> Bool in
                guard state.zlib.count < Self.maximumIdle else { return false }
                state.zlib.append(Idle(pointer: stream))
                return true
            }
            if !keep { Self.free(zlib: stream) }
        }
        return try body(stream)
    }

    private static func free(zlib stream: UnsafeMutablePointer<z_stream>) {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }
}
