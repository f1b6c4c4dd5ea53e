import PulseJSON

/// `CLIENT_HEARTBEAT` (biz type 2) request.
///
/// Wire keys in canonical order: `connectionId`, `clientTimeMs`, `sdkVersion`; all required. A
/// connection ID or SDK version that differs from the connected identity gets code 403.
public struct HeartbeatRequest: Sendable, Hashable {
    /// The connection ID issued in ``ConnectResult/connectionId``.
    public var connectionId: String
    /// The client clock, epoch milliseconds.
    public var clientTimeMs: Int64
    /// The SDK version; must equal the one declared at connect.
    public var sdkVersion: String

    /// Creates a request.
    public init(connectionId: String, clientTimeMs: Int64, sdkVersion: String) {
        self.connectionId = connectionId
        self.clientTimeMs = clientTimeMs
        self.sdkVersion = sdkVersion
    }
}

extension HeartbeatRequest: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        HeartbeatRequest(connectionId: "", clientTimeMs: 0, sdkVersion: ""),
        .required("connectionId", \.connectionId), .required("clientTimeMs", \.clientTimeMs),
        .required("sdkVersion", \.sdkVersion))
}
