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

    /// Creates a policy; every argument defaults to the documented default.
    public init(compressionMinBytes: Int = 1024, zstdLevel: Int32 = 3) {
        self.compressionMinBytes = compressionMinBytes
        self.zstdLevel = zstdLevel
    }
}
