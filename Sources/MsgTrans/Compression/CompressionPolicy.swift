/// How a sender chooses whether to compress a payload.
///
/// Matches the PulseKit SDK: payloads of 1,024 bytes or more are compressed with the preferred
/// codec, smaller ones are sent as they are. zstd uses level 3; zlib always uses the zlib default
/// level so that its stream starts with `78 9c`.
public struct CompressionPolicy: Sendable, Equatable {
    /// Plaintexts with at least this many bytes are compressed. Default 1024.
    public var compressionMinBytes: Int
    /// The zstd compression level. Default 3.
    public var zstdLevel: Int32

    /// The project's one compression threshold: 1,024 bytes (the SDK's and the Pulse contract's
    /// `compressionMinBytes` default).
    public static let defaultCompressionMinBytes = 1024

    /// Creates a policy; every argument defaults to the documented default.
    public init(compressionMinBytes: Int = CompressionPolicy.defaultCompressionMinBytes, zstdLevel: Int32 = 3) {
        self.compressionMinBytes = compressionMinBytes
        self.zstdLevel = zstdLevel
    }

    /// The codec a plaintext of `count` bytes is sent with: `preferred` from
    /// ``compressionMinBytes`` on, else `.none`.
    public func compression(forPlaintextOf count: Int, preferred: Compression) -> Compression {
        preferred != .none && count >= compressionMinBytes ? preferred : .none
    }

    /// `plaintext` in wire form: the codec ``compression(forPlaintextOf:preferred:)`` chooses and
    /// the bytes compressed with it (at ``zstdLevel`` for zstd).
    ///
    /// - Throws: ``MsgTransError/Code/compressionFailed``.
    public func encode(_ plaintext: [UInt8], preferred: Compression) throws(MsgTransError) -> (
        compression: Compression, payload: [UInt8]
    ) {
        let compression = compression(forPlaintextOf: plaintext.count, preferred: preferred)
        guard compression != .none else { return (.none, plaintext) }
        let level: Int32? = compression == .zstd ? zstdLevel : nil
        return (compression, try PayloadCompressor.compress(plaintext, with: compression, level: level))
    }
}
