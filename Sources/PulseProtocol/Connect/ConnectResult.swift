public import PulseJSON

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

extension ConnectResult: PulseJSONCodable {
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        connected = try o.bool("connected")
        protocolVersion = try o.int("protocolVersion")
        connectionId = try o.string("connectionId")
        serverTimeMs = try o.int64("serverTimeMs")
        configRevision = try o.int64("configRevision", default: 0)
        heartbeatIntervalMs = try o.int64("heartbeatIntervalMs", default: ConnectResult.defaultHeartbeatIntervalMs)
        collectKinds = try o.kinds("collectKinds")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("connected", connected)
        writer.field("protocolVersion", protocolVersion)
        writer.field("connectionId", connectionId)
        writer.field("serverTimeMs", serverTimeMs)
        writer.field("configRevision", configRevision)
        writer.field("heartbeatIntervalMs", heartbeatIntervalMs)
        writer.strings("collectKinds", collectKinds.lazy.map(\.rawValue))
        writer.endObject()
    }
}
