import MsgTrans

/// An inbound request, one-way message or response, with its payload decompressed.
public struct MsgTransMessage: Sendable {
    /// The header as received. `header.payloadLength` counts wire bytes (after compression).
    public var header: FrameHeader
    /// The plaintext payload.
    public var payload: [UInt8]

    /// Creates a message.
    public init(header: FrameHeader, payload: [UInt8]) {
        self.header = header
        self.payload = payload
    }

    /// The application operation code.
    public var bizType: UInt8 { header.bizType }
    /// The msgtrans message id.
    public var messageID: UInt32 { header.messageID }
}
