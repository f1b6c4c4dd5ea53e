import PulseProtocol

/// What the server told this session in its CLIENT_CONNECT result, kept current by heartbeats.
public struct PulseSessionInfo: Sendable, Hashable {
    /// The server-issued connection ID, echoed by every heartbeat.
    public var connectionId: String
    /// The protocol version the server speaks.
    public var protocolVersion: Int
    /// The server clock at the last CONNECT or heartbeat result, epoch milliseconds.
    public var serverTimeMs: Int64
    /// The latest configuration revision reported by the server.
    public var configRevision: Int64
    /// The interval the server asked for, in milliseconds, as received.
    public var serverHeartbeatIntervalMs: Int64
    /// The interval the session heartbeats with: ``serverHeartbeatIntervalMs`` clamped to 15 s – 5 min.
    public var heartbeatInterval: Duration
    /// The event kinds the server wants collected; empty means all.
    public var collectKinds: [PulseEventKind]

    /// Creates session information; ``heartbeatInterval`` is derived from `serverHeartbeatIntervalMs`.
    public init(
        connectionId: String, protocolVersion: Int, serverTimeMs: Int64, configRevision: Int64,
        serverHeartbeatIntervalMs: Int64, collectKinds: [PulseEventKind]
    ) {
        self.connectionId = connectionId
        self.protocolVersion = protocolVersion
        self.serverTimeMs = serverTimeMs
        self.configRevision = configRevision
        self.serverHeartbeatIntervalMs = serverHeartbeatIntervalMs
        self.heartbeatInterval = HeartbeatInterval.clamped(milliseconds: serverHeartbeatIntervalMs)
        self.collectKinds = collectKinds
    }
}
