import MsgTrans
import PulseKit

/// An outbox payload in wire form: exactly the msgtrans frame payload and compression byte the
/// forwarder sends, on the first attempt and on every retry.
///
/// Compressing happens once, on the request's task before the group-commit job is queued (the
/// commit thread only copies the bytes). The forwarder puts the stored bytes in the frame as they
/// are: nothing is decompressed or compressed again on the forward path. Payloads of at least
/// ``CompressionPolicy/defaultCompressionMinBytes`` (the project's one threshold) are one zstd
/// frame at level 1 (``policy``), smaller ones are plain.
///
/// The frame compression differs from the SDK's by design: level 1, not 3 (a Pulse envelope of
/// JSON shrinks about five-fold at level 1; level 3 saves about 2 % more for twice the CPU). The
/// plaintext inside is byte-identical to what the mapping produced.
struct StoredPayload: Sendable, Equatable {
    /// The bytes written to the `payload` column: the frame payload.
    var bytes: [UInt8]
    /// The frame's compression (the `compression` column).
    var compression: Compression
    /// The plaintext length (the `payload_bytes` column).
    var plainCount: Int

    /// How the gateway encodes outbox payloads: the one threshold, zstd level 1.
    static let policy = CompressionPolicy(zstdLevel: 1)

    /// The compression byte of a plaintext of `count` bytes under ``policy``.
    static func compression(forPlaintextOf count: Int) -> Compression {
        policy.compression(forPlaintextOf: count, preferred: .zstd)
    }

    /// Encodes `payload` with `compression` (the draft's choice, ``compression(forPlaintextOf:)``).
    /// A compressor failure (it has none for valid input) stores the plaintext uncompressed,
    /// which is a valid frame too.
    init(encoding payload: [UInt8], compression: Compression) {
        plainCount = payload.count
        let level: Int32? = compression == .zstd ? Self.policy.zstdLevel : nil
        if compression != .none,
            let compressed = try? PayloadCompressor.compress(payload, with: compression, level: level)
        {
            bytes = compressed
            self.compression = compression
        } else {
            bytes = payload
            self.compression = .none
        }
    }

    /// Encodes `payload` as ``compression(forPlaintextOf:)`` chooses.
    init(encoding payload: [UInt8]) {
        self.init(encoding: payload, compression: Self.compression(forPlaintextOf: payload.count))
    }

    /// A payload read back from a row.
    init(bytes: [UInt8], compression: Int, plainCount: Int) {
        self.bytes = bytes
        self.compression = Compression(rawValue: UInt8(clamping: compression)) ?? .none
        self.plainCount = plainCount
    }

    /// The plaintext payload (only the crash fallback needs it).
    ///
    /// - Throws: ``GatewayError`` with code `storage` when a compressed payload does not decode
    ///   to exactly its recorded length (a damaged row).
    func plaintext() throws(GatewayError) -> [UInt8] {
        guard compression != .none else { return bytes }
        let plain: [UInt8]
        do {
            plain = try PayloadCompressor.decompress(bytes, with: compression, maxOutputBytes: plainCount)
        } catch {
            throw GatewayError(.storage, "a stored outbox payload cannot be decompressed", underlying: error)
        }
        guard plain.count == plainCount else {
            throw GatewayError(.storage, "a stored outbox payload decompressed to an unexpected length")
        }
        return plain
    }
}
