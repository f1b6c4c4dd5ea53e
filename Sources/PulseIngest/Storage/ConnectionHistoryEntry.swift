/// One row of the durable connection history (returned by ``IngestServer/connectionHistory(app:)``).
public struct ConnectionHistoryEntry: Sendable, Equatable {
    /// The server-issued connection ID.
    public var connectionId: String
    /// The connected App ID.
    public var appId: String
    /// The connected package, if the client declared one.
    public var packageName: String?
    /// The connected device.
    public var deviceId: String
    /// The connected installation.
    public var installationId: String
    /// The connected platform.
    public var platform: String
    /// The connected SDK version.
    public var sdkVersion: String
    /// The peer's address as seen by the server.
    public var remoteAddress: String
    /// When CLIENT_CONNECT succeeded, epoch milliseconds.
    public var connectedAtMs: Int64
    /// The last accepted heartbeat, epoch milliseconds.
    public var lastHeartbeatAtMs: Int64?
    /// Accepted heartbeats.
    public var heartbeatCount: Int
    /// When the connection closed, epoch milliseconds; `nil` while open (or if the server stopped
    /// without recording it).
    public var closedAtMs: Int64?

    /// Creates an entry.
    public init(
        connectionId: String, appId: String, packageName: String?, deviceId: String, installationId: String,
        platform: String, sdkVersion: String, remoteAddress: String, connectedAtMs: Int64, lastHeartbeatAtMs: Int64?,
        heartbeatCount: Int, closedAtMs: Int64?
    ) {
        self.connectionId = connectionId
        self.appId = appId
        self.packageName = packageName
        self.deviceId = deviceId
        self.installationId = installationId
        self.platform = platform
        self.sdkVersion = sdkVersion
        self.remoteAddress = remoteAddress
        self.connectedAtMs = connectedAtMs
        self.lastHeartbeatAtMs = lastHeartbeatAtMs
        self.heartbeatCount = heartbeatCount
        self.closedAtMs = closedAtMs
    }
}
