/// One msgtrans frame as it appears on the wire: header fields, extension header and payload.
///
/// ``payload`` holds the wire bytes, i.e. the compressed stream when ``compression`` is not
/// ``Compression/none``. Use ``make(packetType:bizType:messageID:plaintext:preferred:policy:)`` to
/// build an outbound frame from plaintext (it never labels bytes with a codec they were not
/// produced by) and ``plaintext(limits:)`` to recover the plaintext of an inbound frame.
///
/// Encoding requires `extensionHeader.count <= UInt16.max` and `payload.count <= UInt32.max`;
/// violating that is a programming error and traps.

public import PulseKit

public struct Frame: Sendable, Equatable {
    /// The payload compression named in the header.
    public var compression: Compression
    /// Request, response or one-way.
    public var packetType: PacketType
    /// The application's operation code (Pulse biz type).
    public var bizType: UInt8
    /// Correlates a response with its request.
    public var messageID: UInt32
    /// The reserved flags field, carried through unchanged.
    public var flags: UInt16
    /// The extension header bytes (never compressed). Pulse sends none.
    public var extensionHeader: [UInt8]
    /// The payload bytes as on the wire (compressed when ``compression`` is not `.none`).
    public var payload: [UInt8]

    /// Creates a frame from wire-level parts without validating or compressing anything.
    public init(
        compression: Compression = .none,
        packetType: PacketType,
        bizType: UInt8,
        messageID: UInt32,
        flags: UInt16 = 0,
        extensionHeader: [UInt8] = [],
        payload: [UInt8]
    ) {
        self.compression = compression
        self.packetType = packetType
        self.bizType = bizType
        self.messageID = messageID
        self.flags = flags
        self.extensionHeader = extensionHeader
        self.payload = payload
    }

    /// The header describing this frame.
    public var header: FrameHeader {
        precondition(extensionHeader.count <= Int(UInt16.max), "extension header longer than 65535 bytes")
        precondition(UInt64(payload.count) <= UInt64(UInt32.max), "payload longer than UInt32.max bytes")
        return FrameHeader(
            compression: compression, packetType: packetType, bizType: bizType, messageID: messageID,
            extensionHeaderLength: UInt16(extensionHeader.count), payloadLength: UInt32(payload.count),
            flags: flags)
    }

    /// The number of bytes ``encoded()`` produces.
    public var encodedLength: Int {
        FrameHeader.size + extensionHeader.count + payload.count
    }

    /// The complete frame bytes: header, extension header, payload.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedLength)
        encode(into: &bytes)
        return bytes
    }

    /// Appends the complete frame bytes to `bytes`.
    public func encode(into bytes: inout [UInt8]) {
        header.encode(into: &bytes)
        bytes.append(contentsOf: extensionHeader)
        bytes.append(contentsOf: payload)
    }

    /// Builds an outbound frame from plaintext.
    ///
    /// The plaintext is compressed with `preferred` when it has at least
    /// ``CompressionPolicy/compressionMinBytes`` bytes; otherwise, or when `preferred` is `.none`,
    /// it is sent uncompressed. The codec is applied even if it does not shrink the payload, so the
    /// choice is a pure function of the size (a retry sends the same encoding). Flags are 0 and the
    /// extension header is empty.
    ///
    /// - Throws: ``MsgTransError/Code/compressionFailed`` if the compressor fails, or
    ///   ``MsgTransError/Code/payloadTooLarge`` if the payload cannot be described by a u32 length.
    public static func make(
        packetType: PacketType,
        bizType: UInt8,
        messageID: UInt32,
        plaintext: [UInt8],
        preferred: Compression,
        policy: CompressionPolicy = .init()
    ) throws(MsgTransError) -> Frame {
        let (compression, payload) = try policy.encode(plaintext, preferred: preferred)
        guard UInt64(payload.count) <= UInt64(UInt32.max) else {
            throw MsgTransError(.payloadTooLarge, "payload of \(payload.count) bytes does not fit payload_len")
        }
        return Frame(
            compression: compression, packetType: packetType, bizType: bizType, messageID: messageID,
            payload: payload)
    }

    /// Returns the plaintext of the payload, decompressing it if needed.
    ///
    /// Decompression is streaming and stops as soon as the output would exceed
    /// ``FrameLimits/maxDecompressedBytes``; a size declared inside the compressed stream is never
    /// used to allocate (only to refuse early). Uncompressed payloads are returned as they are.
    ///
    /// - Throws: a payload error (``MsgTransError/isConnectionFatal`` is `false`):
    ///   ``MsgTransError/Code/decompressionFailed``, ``MsgTransError/Code/decompressedTooLarge``,
    ///   ``MsgTransError/Code/trailingBytes`` or ``MsgTransError/Code/truncatedStream``.
    public func plaintext(limits: FrameLimits = .init()) throws(MsgTransError) -> [UInt8] {
        if compression == .none {
            return payload
        }
        return try PayloadCompressor.decompress(
            payload, with: compression, maxOutputBytes: limits.maxDecompressedBytes)
    }
}
