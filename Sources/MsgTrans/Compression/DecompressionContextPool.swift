import CZlib
import CZstd
import Synchronization

/// How often the decompressors created a context and how often they reused one
/// (``PayloadCompressor/contextStatistics``).
public struct DecompressionContextStatistics: Sendable, Equatable {
    /// zstd decompression contexts created (`ZSTD_createDCtx`).
    public var zstdContextsCreated = 0
    /// zstd decompressions that reused a pooled context.
    public var zstdContextsReused = 0
    /// zlib inflate streams created (`inflateInit`).
    public var zlibStreamsCreated = 0
    /// zlib decompressions that reused a pooled stream (`inflateReset`).
    public var zlibStreamsReused = 0

    /// Creates zeroed statistics.
    public init() {}
}

/// A small shared pool of idle decompression contexts, so a payload does not pay for allocating
/// and initialising a decoder (a zstd `DCtx` is ~100 KiB of tables) on every frame.
///
/// A decompression takes a context (or creates one), resets it to a fresh session (parameters
/// included, so the caller's bounds are applied again every time) and gives it back when done,
/// whatever the outcome. Bounded: at most ``maximumIdle`` contexts of each codec are kept, and a
/// context that grew beyond ``maximumRetainedBytes`` (a large window) is freed instead of kept,
/// so the pool never holds more than `maximumIdle × maximumRetainedBytes` per codec however large
/// the streams were. Contexts are used by one thread at a time (taken out of the pool while used).
struct DecompressionContextPool: ~Copyable {
    /// The most idle contexts kept per codec.
    static let maximumIdle = 8
    /// A zstd context larger than this (`ZSTD_sizeof_DCtx`) is freed rather than kept.
    static let maximumRetainedBytes = 1 << 20

    /// An idle context; only ever used by the one caller that took it out of the pool.
    private struct Idle<Pointer>: @unchecked Sendable {
        let pointer: Pointer
    }

    private struct State {
        var zstd: [Idle<OpaquePointer>] = []
        var zlib: [Idle<UnsafeMutablePointer<z_stream>>] = []
        var statistics = DecompressionContextStatistics()
    }

    private let state = Mutex(State())

    /// The pool the decompressors share.
    static let shared = DecompressionContextPool()

    var statistics: DecompressionContextStatistics {
        state.withLock { $0.statistics }
    }

    /// The idle contexts kept now, per codec, and the size of the largest idle zstd context (for
    /// tests of the bounds).
    var idle: (zstd: Int, zlib: Int, largestZstdBytes: Int) {
        state.withLock { state in
            (state.zstd.count, state.zlib.count, state.zstd.map { ZSTD_sizeof_DCtx($0.pointer) }.max() ?? 0)
        }
    }

    // MARK: zstd

    /// Runs `body` with a zstd context reset to a fresh session with default parameters.
    func withZstdContext<R>(
        _ body: (OpaquePointer) throws(MsgTransError) -> R
    ) throws(MsgTransError) -> R {
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
                throw MsgTransError(.decompressionFailed, "zstd: cannot reset a decompression context")
            }
            context = pooled
        } else {
            guard let created = ZSTD_createDCtx() else {
                throw MsgTransError(.decompressionFailed, "zstd: cannot allocate a decompression context")
            }
            state.withLock { $0.statistics.zstdContextsCreated += 1 }
            context = created
        }
        defer { giveBack(zstd: context) }
        return try body(context)
    }

    private func giveBack(zstd context: OpaquePointer) {
        let keep =
            ZSTD_sizeof_DCtx(context) <= Self.maximumRetainedBytes
            && state.withLock { state -> Bool in
                guard state.zstd.count < Self.maximumIdle else { return false }
                state.zstd.append(Idle(pointer: context))
                return true
            }
        if !keep {
            ZSTD_freeDCtx(context)
        }
    }

    // MARK: zlib

    /// Runs `body` with an inflate stream initialised for a zlib (RFC 1950) stream, fresh state.
    ///
    /// The stream lives at a fixed address (zlib keeps a pointer back to it).
    func withZlibStream<R>(
        _ body: (UnsafeMutablePointer<z_stream>) throws(MsgTransError) -> R
    ) throws(MsgTransError) -> R {
        let pooled = state.withLock { state -> Idle<UnsafeMutablePointer<z_stream>>? in
            let stream = state.zlib.popLast()
            if stream != nil { state.statistics.zlibStreamsReused += 1 }
            return stream
        }?.pointer
        let stream: UnsafeMutablePointer<z_stream>
        if let pooled {
            guard inflateReset(pooled) == Z_OK else {
                Self.free(zlib: pooled)
                throw MsgTransError(.decompressionFailed, "zlib: cannot reset an inflate stream")
            }
            stream = pooled
        } else {
            let created = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            created.initialize(to: z_stream())
            let initStatus = inflateInit_(created, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
            guard initStatus == Z_OK else {
                created.deinitialize(count: 1)
                created.deallocate()
                throw MsgTransError(.decompressionFailed, "zlib: inflateInit returned \(initStatus)")
            }
            state.withLock { $0.statistics.zlibStreamsCreated += 1 }
            stream = created
        }
        defer { giveBack(zlib: stream) }
        return try body(stream)
    }

    private func giveBack(zlib stream: UnsafeMutablePointer<z_stream>) {
        // An inflate stream's window is at most 32 KiB: always small enough to keep.
        let keep = state.withLock { state -> Bool in
            guard state.zlib.count < Self.maximumIdle else { return false }
            state.zlib.append(Idle(pointer: stream))
            return true
        }
        if !keep {
            Self.free(zlib: stream)
        }
    }

    private static func free(zlib stream: UnsafeMutablePointer<z_stream>) {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    deinit {
        state.withLock { state in
            for context in state.zstd { ZSTD_freeDCtx(context.pointer) }
            for stream in state.zlib { Self.free(zlib: stream.pointer) }
        }
    }
}
