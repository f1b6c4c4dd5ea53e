import PulseJSON

/// `CLIENT_HEARTBEAT` (biz type 2) success data.
///
/// Wire keys in canonical order: `accepted`, `serverTimeMs`, `configRevision`, `heartbeatIntervalMs`,
/// `collectKinds`. Absent fields default to: `configRevision` 0, `heartbeatIntervalMs` 60000,
/// `collectKinds` `[]`; `accepted` and `serverTimeMs` are required.
public struct HeartbeatResult: Sendable, Hashable {
    /// Whether the heartbeat was accepted.
    public var accepted: Bool
    /// The server clock, epoch milliseconds.
    public var serverTimeMs: Int64
    /// The latest configuration revision.
    public var configRevision: Int64
    /// The interval until the next heartbeat, as sent by the server.
    public var heartbeatIntervalMs: Int64
    /// The event kinds to collect; empty means all.
    public var collectKinds: [PulseEventKind]

    /// The range a client clamps ``heartbeatIntervalMs`` to: 15 s to 5 min.
    public static let clientIntervalRangeMs: ClosedRange<Int64> = 15_000...300_000

    /// Creates a result.
    public init(
        accepted: Bool = true, serverTimeMs: Int64, configRevision: Int64 = 0,
        heartbeatIntervalMs: Int64 = ConnectResult.defaultHeartbeatIntervalMs, collectKinds: [PulseEventKind] = []
    ) {
        self.accepted = accepted
        self.serverTimeMs = serverTimeMs
        self.configRevision = configRevision
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.collectKinds = collectKinds
    }

    /// ``heartbeatIntervalMs`` clamped to ``clientIntervalRangeMs``, the value a client schedules with.
    public var clampedHeartbeatIntervalMs: Int64 {
        min(max(heartbeatIntervalMs, Self.clientIntervalRangeMs.lowerBound), Self.clientIntervalRangeMs.upperBound)
    }
}

extension HeartbeatResult: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        HeartbeatResult(serverTimeMs: 0),
        .required("accepted", \.accepted), .required("serverTimeMs", \.serverTimeMs),
        .defaulted("configRevision", \.configRevision), .defaulted("heartbeatIntervalMs", \.heartbeatIntervalMs),
        .defaulted("collectKinds", \.collectKinds))
}
