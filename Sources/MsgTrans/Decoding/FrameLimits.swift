/// Size limits a receiver enforces on inbound frames.
///
/// The defaults follow msgtrans-kotlin and the Pulse contract:
///
/// | limit | default | checked |
/// |---|---|---|
/// | ``maxPayloadBytes`` | 64 MiB | from the header, before any payload byte is buffered |
/// | ``maxExtensionHeaderBytes`` | 4 KiB | from the header, before any extension byte is buffered |
/// | ``maxDecompressedBytes`` | 16 MiB | while decompressing, in bounded steps |
///
/// The extension header limit is a choice of this codec: Pulse always sends an empty extension
/// header, and the msgtrans flags that would use one (routing tags) need only a few bytes, so
/// 4 KiB leaves ample room while keeping a hostile header from reserving the full 64 KiB the
/// 16-bit length field allows.
///
/// ``maxDecompressedBytes`` bounds the output of zstd and zlib only. An uncompressed payload is
/// already bounded by ``maxPayloadBytes``. A frame is therefore at most
/// 16 + ``maxExtensionHeaderBytes`` + ``maxPayloadBytes`` bytes on the wire.
///
/// Negative values behave like zero.
public struct FrameLimits: Sendable, Equatable {
    /// The largest accepted `payload_len` (bytes on the wire, after compression). Default 64 MiB.
    public var maxPayloadBytes: Int
    /// The largest accepted `ext_header_len`. Default 4096.
    public var maxExtensionHeaderBytes: Int
    /// The largest accepted plaintext produced by decompression. Default 16 MiB.
    public var maxDecompressedBytes: Int

    /// Creates limits; every argument defaults to the documented default.
    public init(
        maxPayloadBytes: Int = 64 << 20,
        maxExtensionHeaderBytes: Int = 4096,
        maxDecompressedBytes: Int = 16 << 20
    ) {
        self.maxPayloadBytes = maxPayloadBytes
        self.maxExtensionHeaderBytes = maxExtensionHeaderBytes
        self.maxDecompressedBytes = maxDecompressedBytes
    }
}
