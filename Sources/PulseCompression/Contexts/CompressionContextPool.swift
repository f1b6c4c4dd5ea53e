import CZlib
import CZstd
import PulseKit
import Synchronization

/// How often the codecs created a context and how often they reused one
/// (``CompressionContextPool/statistics``).
package struct CompressionContextStatistics: Sendable, Equatable {
    /// zstd decompression contexts created (`ZSTD_createDCtx`).
    package var zstdContextsCreated = 0
    /// zstd decompressions that reused a pooled context.
    package var zstdContextsReused = 0
    /// zlib inflate streams created (`inflateInit2`).
    package var zlibStreamsCreated = 0
    /// zlib decompressions that reused a pooled stream (`inflateReset2`).
    package var zlibStreamsReused = 0
    /// zstd compression contexts created (`ZSTD_createCCtx`).
    package var zstdCompressionContextsCreated = 0
    /// zstd compressions that reused a pooled context.
    package var zstdCompressionContextsReused = 0

    /// Creates zeroed statistics.
    package init() {}
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
package final class CompressionContextPool: Sendable {
    /// The most idle contexts kept per kind.
    package static let maximumIdle = 8
    /// A zstd context larger than this (`ZSTD_sizeof_DCtx`, `ZSTD_sizeof_CCtx`) is freed rather
    /// than kept.
    package static let maximumRetainedBytes = 2 << 20

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
    package static let shared = CompressionContextPool()

    /// Creations and reuses so far.
    package var statistics: CompressionContextStatistics {
        state.withLock { $0.statistics }
    }

    /// The idle contexts kept now, per kind, and the size of the largest idle zstd decompression
    /// context (for tests of the bounds).
    package var idle: (zstd: Int, zlib: Int, zstdCompression: Int, largestZstdBytes: Int) {
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

    // MARK: Contexts

    /// Runs `body` with a context of the kind `idle` names: a pooled one made ready by `reuse`
    /// (`false`: it is freed and `failure` thrown) or one from `create`; afterwards it is kept if
    /// there is room and it is at most ``maximumRetainedBytes`` (`size`), else `free`d.
    private func withContext<Pointer, R>(
        _ idle: WritableKeyPath<State, [Idle<Pointer>]>,
        counted: (
            reused: WritableKeyPath<CompressionContextStatistics, Int>,
            created: WritableKeyPath<CompressionContextStatistics, Int>
        ),
        reuse: (Pointer) -> Bool, create: () -> Pointer?, size: (Pointer) -> Int, free: (Pointer) -> Void,
        failure: CompressionError, _ body: (Pointer) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        let pooled = state.withLock { state -> Pointer? in
            let context = state[keyPath: idle].popLast()?.pointer
            if context != nil { state.statistics[keyPath: counted.reused] += 1 }
            return context
        }
        let context: Pointer
        if let pooled {
            guard reuse(pooled) else {
                free(pooled)
                throw failure
            }
            context = pooled
        } else {
            guard let created = create() else { throw failure }
            state.withLock { $0.statistics[keyPath: counted.created] += 1 }
            context = created
        }
        defer {
            let keep =
                size(context) <= Self.maximumRetainedBytes
                && state.withLock { state -> Bool in
                    guard state[keyPath: idle].count < Self.maximumIdle else { return false }
                    state[keyPath: idle].append(Idle(pointer: context))
                    return true
                }
            if !keep { free(context) }
        }
        return try body(context)
    }

    /// Runs `body` with a zstd compression context (its parameters are set by the call that uses
    /// it: `ZSTD_compressCCtx` resets them).
    func withZstdCompressionContext<R>(
        _ body: (OpaquePointer) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        try withContext(
            \.zstdCompression, counted: (\.zstdCompressionContextsReused, \.zstdCompressionContextsCreated),
            reuse: { _ in true }, create: { ZSTD_createCCtx() }, size: { ZSTD_sizeof_CCtx($0) },
            free: { ZSTD_freeCCtx($0) },
            failure: CompressionError(.compressionFailed, "zstd: cannot allocate a compression context"), body)
    }

    /// Runs `body` with a zstd decompression context reset to a fresh session with default
    /// parameters.
    func withZstdContext<R>(
        _ body: (OpaquePointer) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        try withContext(
            \.zstd, counted: (\.zstdContextsReused, \.zstdContextsCreated),
            reuse: { ZSTD_isError(ZSTD_DCtx_reset($0, ZSTD_reset_session_and_parameters)) == 0 },
            create: { ZSTD_createDCtx() }, size: { ZSTD_sizeof_DCtx($0) }, free: { ZSTD_freeDCtx($0) },
            failure: CompressionError(.decompressionFailed, "zstd: cannot prepare a decompression context"), body)
    }

    /// Runs `body` with an inflate stream initialised for `windowBits` (15 zlib, 31 gzip, -15 raw
    /// deflate), fresh state. The stream lives at a fixed address (zlib keeps a pointer back to
    /// it); its window is at most 32 KiB, always small enough to keep.
    func withInflateStream<R>(
        windowBits: Int32, _ body: (UnsafeMutablePointer<z_stream>) throws(CompressionError) -> R
    ) throws(CompressionError) -> R {
        try withContext(
            \.zlib, counted: (\.zlibStreamsReused, \.zlibStreamsCreated),
            reuse: { inflateReset2($0, windowBits) == Z_OK },
            create: {
                let created = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
                created.initialize(to: z_stream())
                guard inflateInit2_(created, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
                else {
                    created.deinitialize(count: 1)
                    created.deallocate()
                    return nil
                }
                return created
            }, size: { _ in 0 }, free: { Self.free(zlib: $0) },
            failure: CompressionError(.decompressionFailed, "zlib: cannot prepare an inflate stream"), body)
    }

    private static func free(zlib stream: UnsafeMutablePointer<z_stream>) {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }
}
