import CZstd
import MsgTrans
import Synchronization

/// An outbox payload as it is stored: zstd-compressed when that makes it smaller, else plain.
///
/// Compressing happens on the request's task before the group-commit job is queued, so the
/// commit thread only copies the smaller bytes; decompressing happens on the forwarder's task
/// after the row was read. A Pulse envelope of JSON shrinks about five-fold at level 1, which cuts
/// the pages each commit writes and fsyncs (an 8.5 KB payload no longer needs overflow pages).
struct StoredPayload: Sendable, Equatable {
    /// How `bytes` encode the payload (the `payload_encoding` column).
    enum Encoding: Int, Sendable {
        case plain = 0
        case zstd = 1
    }

    /// The bytes written to the `payload` column.
    var bytes: [UInt8]
    var encoding: Encoding
    /// The plaintext length (the `payload_bytes` column).
    var plainCount: Int

    /// Payloads shorter than this are stored plain (a zstd frame has ~10 bytes of overhead and the
    /// win is a few bytes at best).
    static let minimumCompressedBytes = 256
    /// zstd level 1: the fastest standard level; level 3 saves only ~2 % more on these payloads.
    static let level: Int32 = 1

    /// Encodes `payload` for storage.
    init(encoding payload: [UInt8]) {
        plainCount = payload.count
        if payload.count >= Self.minimumCompressedBytes, let compressed = Self.compressors.compress(payload),
            compressed.count < payload.count
        {
            bytes = compressed
            encoding = .zstd
        } else {
            bytes = payload
            encoding = .plain
        }
    }

    /// Reused compression contexts: creating one per payload costs about as much as compressing it.
    private static let compressors = CompressorPool(level: level)

    /// A payload read back from a row.
    init(bytes: [UInt8], encoding: Int, plainCount: Int) {
        self.bytes = bytes
        self.encoding = Encoding(rawValue: encoding) ?? .plain
        self.plainCount = plainCount
    }

    /// The plaintext payload.
    ///
    /// - Throws: ``GatewayError`` with code `storage` when a compressed payload does not decode
    ///   to exactly its recorded length (a damaged row).
    func plaintext() throws(GatewayError) -> [UInt8] {
        switch encoding {
        case .plain:
            return bytes
        case .zstd:
            let plain: [UInt8]
            do {
                plain = try PayloadCompressor.decompress(bytes, with: .zstd, maxOutputBytes: plainCount)
            } catch {
                throw GatewayError(.storage, "a stored outbox payload cannot be decompressed", underlying: error)
            }
            guard plain.count == plainCount else {
                throw GatewayError(.storage, "a stored outbox payload decompressed to an unexpected length")
            }
            return plain
        }
    }
}

/// A few zstd compression contexts, each used by one caller at a time.
private final class CompressorPool: Sendable {
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let idle = Mutex<[Context]>([])
    private let level: Int32
    /// Contexts kept for reuse; more concurrent callers create (and free) their own.
    private static let capacity = 8

    init(level: Int32) {
        self.level = level
    }

    deinit {
        for context in idle.withLock({ $0 }) { ZSTD_freeCCtx(context.pointer) }
    }

    /// One zstd frame of `input`, or `nil` when libzstd fails.
    func compress(_ input: [UInt8]) -> [UInt8]? {
        guard let context = idle.withLock({ $0.popLast() }) ?? ZSTD_createCCtx().map(Context.init) else { return nil }
        defer {
            let kept = idle.withLock { idle -> Bool in
                guard idle.count < Self.capacity else { return false }
                idle.append(context)
                return true
            }
            if !kept { ZSTD_freeCCtx(context.pointer) }
        }
        let bound = ZSTD_compressBound(input.count)
        guard ZSTD_isError(bound) == 0 else { return nil }
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
            let written = input.withUnsafeBytes { source in
                ZSTD_compressCCtx(context.pointer, out.baseAddress, out.count, source.baseAddress, source.count, level)
            }
            failed = ZSTD_isError(written) != 0
            count = failed ? 0 : written
        }
        return failed ? nil : output
    }
}
