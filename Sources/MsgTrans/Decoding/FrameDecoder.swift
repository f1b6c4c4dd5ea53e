/// Incremental decoder that cuts a byte stream into ``Frame``s.
///
/// Append bytes as they arrive, then call ``next()`` until it returns `nil`:
///
/// ```swift
/// var decoder = FrameDecoder()
/// decoder.append(bytesFromSocket)
/// while let frame = try decoder.next() {
///     handle(frame)
/// }
/// ```
///
/// - The header is validated as soon as its 16 bytes are buffered, before any extension header
///   or payload byte is needed, so a hostile length never makes the caller wait for (or buffer)
///   the body. Call ``next()`` after every ``append(_:)-([UInt8])`` so that nothing more than one
///   read's worth of bytes is buffered past a bad header.
/// - A framing error is sticky: once ``next()`` has thrown, every later call throws the same
///   connection-fatal error and further appended bytes are discarded.
/// - Payloads are returned as on the wire; call ``Frame/plaintext(limits:)`` to decompress.
/// - Consumed bytes are skipped with a read index; the buffer is compacted only when the consumed
///   prefix is at least as long as what remains, so the total copying is linear in the input. A
///   drained buffer keeps up to 256 KiB of capacity and releases anything larger.

public import PulseKit

public struct FrameDecoder: Sendable {
    /// The limits every header is checked against.
    public let limits: FrameLimits

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// The validated header of the frame starting at `readIndex`, once its 16 bytes arrived.
    private var pendingHeader: FrameHeader?
    private var failure: MsgTransError?

    /// Capacity kept by a drained buffer; larger buffers are released.
    private static let retainedCapacity = 256 << 10

    /// Creates a decoder enforcing `limits`.
    public init(limits: FrameLimits = .init()) {
        self.limits = limits
    }

    /// The number of bytes received but not yet returned as part of a frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes. After a framing error they are discarded.
    public mutating func append(_ bytes: [UInt8]) {
        guard failure == nil else { return }
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes (copied). After a framing error they are discarded.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete frame, or `nil` (consuming nothing) if it has not fully arrived.
    ///
    /// - Throws: a connection-fatal ``MsgTransError`` (``MsgTransError/Code/unsupportedVersion``,
    ///   ``MsgTransError/Code/unknownCompression``, ``MsgTransError/Code/unknownPacketType``,
    ///   ``MsgTransError/Code/extensionHeaderTooLarge`` or ``MsgTransError/Code/payloadTooLarge``)
    ///   as soon as the header of the next frame is buffered and invalid.
    public mutating func next() throws(MsgTransError) -> Frame? {
        if let failure {
            throw failure
        }
        let header: FrameHeader
        if let pendingHeader {
            header = pendingHeader
        } else {
            guard bufferedByteCount >= FrameHeader.size else { return nil }
            do {
                header = try FrameHeader.parse(buffer, at: readIndex, limits: limits)
            } catch {
                failure = error
                throw error
            }
            pendingHeader = header
        }
        guard bufferedByteCount >= header.frameLength else { return nil }

        let extensionStart = readIndex + FrameHeader.size
        let payloadStart = extensionStart + Int(header.extensionHeaderLength)
        let end = readIndex + header.frameLength
        let frame = Frame(
            compression: header.compression, packetType: header.packetType, bizType: header.bizType,
            messageID: header.messageID, flags: header.flags,
            extensionHeader: Array(buffer[extensionStart..<payloadStart]),
            payload: Array(buffer[payloadStart..<end]))
        readIndex = end
        pendingHeader = nil
        if readIndex == buffer.count {
            if buffer.capacity > Self.retainedCapacity {
                buffer = []
            } else {
                buffer.removeAll(keepingCapacity: true)
            }
            readIndex = 0
        }
        return frame
    }

    /// Reports whether the stream may end here: call it when the connection closes.
    ///
    /// - Throws: the sticky framing error if ``next()`` failed, or a connection-fatal
    ///   ``MsgTransError/Code/incompleteFrame`` when bytes of an unfinished frame are buffered.
    public func finish() throws(MsgTransError) {
        if let failure {
            throw failure
        }
        if bufferedByteCount > 0 {
            throw MsgTransError(
                .incompleteFrame, "stream ended with \(bufferedByteCount) bytes of an incomplete frame")
        }
    }

    /// Drops the consumed prefix when it is at least as long as the unread rest, which keeps the
    /// total cost of compaction linear in the number of bytes consumed.
    private mutating func compactIfWorthIt() {
        guard readIndex > 0, readIndex >= buffer.count - readIndex else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
