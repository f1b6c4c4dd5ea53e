package import MsgTrans

/// The answer to an inbound request: a plaintext payload and the preferred compression.
///
/// The runtime frames it as a Response that echoes the request's message id and biz type, and
/// compresses it with ``compression`` when the payload reaches
/// ``MsgTransConfiguration/compressionPolicy``'s threshold.
package struct MsgTransReply: Sendable, Equatable {
    /// The plaintext payload.
    package var payload: [UInt8]
    /// The preferred compression.
    package var compression: Compression

    /// Creates a reply.
    package init(_ payload: [UInt8], compression: Compression = .none) {
        self.payload = payload
        self.compression = compression
    }
}
