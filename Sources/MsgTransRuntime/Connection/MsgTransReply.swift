import MsgTrans

/// The answer to an inbound request: a plaintext payload and the preferred compression.
///
/// The runtime frames it as a Response that echoes the request's message id and biz type, and
/// compresses it with ``compression`` when the payload reaches
/// ``MsgTransConfiguration/compressionPolicy``'s threshold.
public struct MsgTransReply: Sendable, Equatable {
    /// The plaintext payload.
    public var payload: [UInt8]
    /// The preferred compression.
    public var compression: Compression

    /// Creates a reply.
    public init(_ payload: [UInt8], compression: Compression = .none) {
        self.payload = payload
        self.compression = compression
    }
}
