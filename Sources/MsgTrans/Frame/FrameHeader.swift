/// The fixed 16-byte msgtrans header (version 1). All integers are big-endian.
///
/// | offset | size | field |
/// |---:|---:|---|
/// | 0 | 1 | version, always 1 |
/// | 1 | 1 | compression |
/// | 2 | 1 | packet type |
/// | 3 | 1 | biz type |
/// | 4 | 4 | message id |
/// | 8 | 2 | extension header length |
/// | 10 | 4 | payload length (bytes on the wire, after compression) |
/// | 14 | 2 | flags (`0x1` fragmented, `0x2` high priority, `0x4` route tag) |
///
/// The codec carries ``flags`` through unchanged and gives them no meaning; Pulse sends 0.

public import PulseKit

public struct FrameHeader: Sendable, Equatable {
    /// The size of the encoded header in bytes.
    public static let size = 16
    /// The only supported protocol version.
    public static let version: UInt8 = 1

    /// The payload compression.
    public var compression: Compression
    /// Request, response or one-way.
    public var packetType: PacketType
    /// The application's operation code (Pulse biz type).
    public var bizType: UInt8
    /// Correlates a response with its request.
    public var messageID: UInt32
    /// The number of extension header bytes that follow the header.
    public var extensionHeaderLength: UInt16
    /// The number of payload bytes that follow the extension header.
    public var payloadLength: UInt32
    /// The reserved flags field, carried through unchanged.
    public var flags: UInt16

    /// Creates a header from its fields.
    public init(
        compression: Compression = .none,
        packetType: PacketType,
        bizType: UInt8,
        messageID: UInt32,
        extensionHeaderLength: UInt16 = 0,
        payloadLength: UInt32,
        flags: UInt16 = 0
    ) {
        self.compression = compression
        self.packetType = packetType
        self.bizType = bizType
        self.messageID = messageID
        self.extensionHeaderLength = extensionHeaderLength
        self.payloadLength = payloadLength
        self.flags = flags
    }

    /// Parses and validates the first ``size`` bytes of `bytes`.
    ///
    /// Checks, in order: version, compression, packet type, extension header length and payload
    /// length against `limits`. Every failure is connection-fatal.
    ///
    /// - Throws: ``MsgTransError`` with code ``MsgTransError/Code/incompleteFrame`` when fewer than
    ///   ``size`` bytes are given, or the code of the first failed check.
    public init(decoding bytes: [UInt8], limits: FrameLimits = .init()) throws(MsgTransError) {
        guard bytes.count >= Self.size else {
            throw MsgTransError(
                .incompleteFrame, "header needs \(Self.size) bytes, got \(bytes.count)")
        }
        self = try FrameHeader.parse(bytes, at: 0, limits: limits)
    }

    /// The number of bytes of the whole frame this header introduces.
    public var frameLength: Int {
        Self.size + Int(extensionHeaderLength) + Int(payloadLength)
    }

    /// The 16 encoded header bytes.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.size)
        encode(into: &bytes)
        return bytes
    }

    /// Appends the 16 encoded header bytes to `bytes`.
    public func encode(into bytes: inout [UInt8]) {
        bytes.append(Self.version)
        bytes.append(compression.rawValue)
        bytes.append(packetType.rawValue)
        bytes.append(bizType)
        bytes.appendBigEndian(messageID)
        bytes.appendBigEndian(extensionHeaderLength)
        bytes.appendBigEndian(payloadLength)
        bytes.appendBigEndian(flags)
    }

    /// Parses and validates the header at `offset`; the caller guarantees 16 readable bytes.
    static func parse(_ bytes: [UInt8], at offset: Int, limits: FrameLimits) throws(MsgTransError) -> FrameHeader {
        @inline(__always) func byte(_ index: Int) -> UInt8 { bytes[offset + index] }
        @inline(__always) func u16(_ index: Int) -> UInt16 {
            UInt16(byte(index)) << 8 | UInt16(byte(index + 1))
        }
        @inline(__always) func u32(_ index: Int) -> UInt32 {
            UInt32(u16(index)) << 16 | UInt32(u16(index + 2))
        }

        let version = byte(0)
        guard version == Self.version else {
            throw MsgTransError(.unsupportedVersion, "frame version \(version), expected \(Self.version)")
        }
        guard let compression = Compression(rawValue: byte(1)) else {
            throw MsgTransError(.unknownCompression, "unknown compression \(byte(1))")
        }
        guard let packetType = PacketType(rawValue: byte(2)) else {
            throw MsgTransError(.unknownPacketType, "unknown packet type \(byte(2))")
        }
        let extensionHeaderLength = u16(8)
        guard Int(extensionHeaderLength) <= max(limits.maxExtensionHeaderBytes, 0) else {
            throw MsgTransError(
                .extensionHeaderTooLarge,
                "ext_header_len \(extensionHeaderLength) exceeds limit \(limits.maxExtensionHeaderBytes)")
        }
        let payloadLength = u32(10)
        guard Int(payloadLength) <= max(limits.maxPayloadBytes, 0) else {
            throw MsgTransError(
                .payloadTooLarge, "payload_len \(payloadLength) exceeds limit \(limits.maxPayloadBytes)")
        }
        return FrameHeader(
            compression: compression, packetType: packetType, bizType: byte(3), messageID: u32(4),
            extensionHeaderLength: extensionHeaderLength, payloadLength: payloadLength, flags: u16(14))
    }
}
