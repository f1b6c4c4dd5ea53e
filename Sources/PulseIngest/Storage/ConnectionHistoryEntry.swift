/// One row of the durable connection history (returned by ``IngestServer/connectionHistory(app:)``).
package struct ConnectionHistoryEntry: Sendable, Equatable {
    /// The server-issued connection ID.
    package var connectionId: String
    /// The connected App ID.
    package var appId: String
    /// The connected package, if the client declared one.
    package var packageName: String?
    /// The connected device.
    package var deviceId: String
    /// The connected installation.
    package var installationId: String
    /// The connected platform.
    package var platform: String
    /// The connected SDK version.
    package var sdkVersion: String
    /// The peer's address as seen by the server.
    package var remoteAddress: String
    /// When CLIENT_CONNECT succeeded, epoch milliseconds.
    package var connectedAtMs: Int64
    /// The last accepted heartbeat, epoch milliseconds.
    package var lastHeartbeatAtMs: Int64?
    /// Accepted heartbeats.
    package var heartbeatCount: Int
    /// When the connection closed, epoch milliseconds; `nil` while open (or if the server stopped
    /// without recording it).
    package var closedAtMs: Int64?

    /// Creates an entry.
    package init(
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
