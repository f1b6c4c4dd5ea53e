import PulseJSON

/// `CLIENT_CONNECT` (biz type 1) success data.
///
/// Wire keys in canonical order: `connected`, `protocolVersion`, `connectionId`, `serverTimeMs`,
/// `configRevision`, `heartbeatIntervalMs`, `collectKinds`. Absent fields default to: `configRevision`
/// 0, `heartbeatIntervalMs` 60000, `collectKinds` `[]` (meaning all kinds); the others are required.
public struct ConnectResult: Sendable, Hashable {
    /// Always `true` in a success response.
    public var connected: Bool
    /// The protocol version the server speaks.
    public var protocolVersion: Int
    /// The server-issued connection ID, echoed by every heartbeat.
    public var connectionId: String
    /// The server clock, epoch milliseconds.
    public var serverTimeMs: Int64
    /// The latest configuration revision; the client pulls when it is newer than its own.
    public var configRevision: Int64
    /// The interval the client schedules its next heartbeat with.
    public var heartbeatIntervalMs: Int64
    /// The event kinds the client should collect; empty means all.
    public var collectKinds: [PulseEventKind]

    /// The default heartbeat interval, 60 s.
    public static let defaultHeartbeatIntervalMs: Int64 = 60_000

    /// Creates a result.
    public init(
        connected: Bool = true, protocolVersion: Int = ConnectRequest.currentProtocolVersion, connectionId: String,
        serverTimeMs: Int64, configRevision: Int64 = 0,
        heartbeatIntervalMs: Int64 = ConnectResult.defaultHeartbeatIntervalMs, collectKinds: [PulseEventKind] = []
    ) {
        self.connected = connected
        self.protocolVersion = protocolVersion
        self.connectionId = connectionId
        self.serverTimeMs = serverTimeMs
        self.configRevision = configRevision
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.collectKinds = collectKinds
    }
}

extension ConnectResult: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        ConnectResult(connectionId: "", serverTimeMs: 0),
        .required("connected", \.connected), .required("protocolVersion", \.protocolVersion),
        .required("connectionId", \.connectionId), .required("serverTimeMs", \.serverTimeMs),
        .defaulted("configRevision", \.configRevision), .defaulted("heartbeatIntervalMs", \.heartbeatIntervalMs),
        .defaulted("collectKinds", \.collectKinds))
}
