public import PulseKit

/// The single error type of the MsgTrans module: the shared ``PulseError`` shape with
/// ``MsgTransErrorCode``.
///
/// Errors fall in two groups, reported by ``isConnectionFatal``:
///
/// - **Framing errors** (bad version, unknown packet type or compression, oversized lengths, a
///   connection that ends mid-frame). They are detected from the 16-byte header alone. After one
///   of them the byte stream cannot be trusted to stay in sync, so the connection must be closed
///   without an application response.
/// - **Payload errors** (invalid, truncated, over-long or over-large compressed payloads) and
///   local compression failures. The frame boundaries are intact, so a receiver may answer the
///   request with a protocol-level error response and keep the connection.
///
/// Descriptions contain header numbers and library error names only, never payload bytes.
public typealias MsgTransError = PulseError<MsgTransErrorCode>

/// What went wrong in the MsgTrans module.
public enum MsgTransErrorCode: String, PulseErrorCode, CaseIterable {
    /// The header's version byte is not ``FrameHeader/version``.
    case unsupportedVersion
    /// The header's packet type byte is not a known ``PacketType``.
    case unknownPacketType
    /// The header's compression byte is not a known ``Compression``.
    case unknownCompression
    /// `payload_len` exceeds ``FrameLimits/maxPayloadBytes`` (or a payload cannot be framed at all).
    case payloadTooLarge
    /// `ext_header_len` exceeds ``FrameLimits/maxExtensionHeaderBytes``.
    case extensionHeaderTooLarge
    /// The input ended inside a frame (fewer bytes than the header announces).
    case incompleteFrame
    /// The compressed payload is not a valid stream of the codec named in the header.
    case decompressionFailed
    /// Decompression would produce more than the allowed number of bytes.
    case decompressedTooLarge
    /// Bytes follow the end of the compressed stream.
    case trailingBytes
    /// The compressed stream ends before its end marker.
    case truncatedStream
    /// The local compressor failed.
    case compressionFailed
}

extension MsgTransError {
    /// Whether the connection that produced this error must be closed.
    ///
    /// `true` for framing errors, after which the stream position of the next frame is unknown or
    /// the peer is violating the transport contract; `false` for payload and local errors.
    public var isConnectionFatal: Bool {
        switch code {
        case .unsupportedVersion, .unknownPacketType, .unknownCompression, .payloadTooLarge,
            .extensionHeaderTooLarge, .incompleteFrame:
            return true
        case .decompressionFailed, .decompressedTooLarge, .trailingBytes, .truncatedStream,
            .compressionFailed:
            return false
        }
    }
}
