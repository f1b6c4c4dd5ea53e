/// The payload compression named by the msgtrans header (byte 1).
///
/// Compression covers the whole payload once. The extension header is never compressed.
/// Any other value on the wire is a connection-fatal ``MsgTransError/Code/unknownCompression``:
/// unlike msgtrans-rust 1.0, this codec never maps unknown values to ``none``.
public enum Compression: UInt8, Sendable, CaseIterable {
    /// The payload is the plaintext.
    case none = 0
    /// The payload is exactly one standard zstd frame (magic `28 b5 2f fd`); senders use level 3.
    case zstd = 1
    /// The payload is one RFC 1950 zlib stream; senders use the default level (header `78 9c`).
    case zlib = 2
}
