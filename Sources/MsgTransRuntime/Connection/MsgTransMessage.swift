package import MsgTrans

/// An inbound request, one-way message or response, with its payload decompressed.
package struct MsgTransMessage: Sendable {
    /// The header as received. `header.payloadLength` counts wire bytes (after compression).
    package var header: FrameHeader
    /// The plaintext payload.
    package var payload: [UInt8]

    /// Creates a message.
    package init(header: FrameHeader, payload: [UInt8]) {
        self.header = header
        self.payload = payload
    }

    /// The application operation code.
    package var bizType: UInt8 { header.bizType }
    /// The msgtrans message id.
    package var messageID: UInt32 { header.messageID }
}
