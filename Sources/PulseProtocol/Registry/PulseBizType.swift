/// A Pulse `biz_type`: the unsigned byte at offset 3 of the msgtrans header that names the Pulse
/// operation of a request (protocol version 2).
///
/// Responses echo their request's `biz_type`; there are no response-only values. Code never writes a
/// numeric literal for a business type: use the named constants (``clientConnect`` ...
/// ``bidirectionalControlRPC``) and look metadata up in ``registry``. Value 0 is reserved and invalid
/// for Pulse even though msgtrans accepts it.
public struct PulseBizType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte as it appears on the wire.
    public let rawValue: UInt8

    /// Wraps any byte, allocated or not. Use ``isAllocated`` or ``registry`` to classify it.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// 0: reserved, never valid as a Pulse operation.
    public static let reserved = PulseBizType(rawValue: 0)
    /// 1: `CLIENT_CONNECT`, the mandatory first request binding the connection to an identity.
    public static let clientConnect = PulseBizType(rawValue: 1)
    /// 2: `CLIENT_HEARTBEAT`, the application heartbeat keeping the session routable.
    public static let clientHeartbeat = PulseBizType(rawValue: 2)
    /// 3: `CLIENT_CONFIG_PULL`, fetches a complete versioned policy snapshot.
    public static let clientConfigPull = PulseBizType(rawValue: 3)
    /// 4: `CLIENT_CRASH_BATCH_UPLOAD`, high-priority crash reports with attachment metadata.
    public static let clientCrashBatchUpload = PulseBizType(rawValue: 4)
    /// 5: `CLIENT_EVENT_BATCH_UPLOAD`, one identity plus an ordered event array.
    public static let clientEventBatchUpload = PulseBizType(rawValue: 5)
    /// 6: `CLIENT_APP_UPDATE_CHECK`, asks whether a newer build exists; fails open to "no update".
    public static let clientAppUpdateCheck = PulseBizType(rawValue: 6)
    /// 7: `BIDIRECTIONAL_CONTROL_RPC`, a route plus arguments; either peer may originate it.
    public static let bidirectionalControlRPC = PulseBizType(rawValue: 7)

    /// The canonical table of allocated values (protocol version 2).
    public static let registry = PulseBizTypeRegistry.protocolVersion2

    /// Whether this value is allocated in the canonical table (value 0 is not).
    public var isAllocated: Bool { Self.registry[self] != nil }

    /// The contract name (for example `CLIENT_CONNECT`) or `UNALLOCATED(n)`.
    public var description: String {
        if let entry = Self.registry[self] {
            return entry.name
        }
        return rawValue == Self.reserved.rawValue ? "RESERVED(0)" : "UNALLOCATED(\(rawValue))"
    }
}
