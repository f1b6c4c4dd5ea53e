/// The msgtrans packet type (header byte 2).
///
/// Any other value on the wire is a connection-fatal ``MsgTransError/Code/unknownPacketType``:
/// unlike msgtrans-rust 1.0, this codec never maps unknown values to one-way.
public enum PacketType: UInt8, Sendable, CaseIterable {
    /// A lossy notification; no response is expected.
    case oneWay = 0
    /// A request; the peer answers with exactly one ``response`` carrying the same message id.
    case request = 1
    /// The answer to a ``request``, matched by message id.
    case response = 2
}
