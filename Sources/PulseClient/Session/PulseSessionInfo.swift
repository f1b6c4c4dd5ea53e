package import PulseProtocol

/// What the server told this session in its CLIENT_CONNECT result, kept current by heartbeats.
package struct PulseSessionInfo: Sendable, Hashable {
    /// The server-issued connection ID, echoed by every heartbeat.
    package var connectionId: String
    /// The protocol version the server speaks.
    package var protocolVersion: Int
    /// The server clock at the last CONNECT or heartbeat result, epoch milliseconds.
    package var serverTimeMs: Int64
    /// The latest configuration revision reported by the server.
    package var configRevision: Int64
    /// The interval the server asked for, in milliseconds, as received.
    package var serverHeartbeatIntervalMs: Int64
    /// The interval the session heartbeats with: ``serverHeartbeatIntervalMs`` clamped to 15 s – 5 min.
    package var heartbeatInterval: Duration
    /// The event kinds the server wants collected; empty means all.
    package var collectKinds: [PulseEventKind]

    /// Creates session information; ``heartbeatInterval`` is derived from `serverHeartbeatIntervalMs`.
    package init(
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
