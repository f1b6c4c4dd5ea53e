/// The client side of the heartbeat interval rule: follow the server's interval, clamped.
enum HeartbeatInterval {
    /// The range a client keeps its heartbeat interval in: 15 s to 5 min.
    static let allowed: ClosedRange<Duration> = .seconds(15) ... .seconds(300)

    /// The server's `heartbeatIntervalMs` clamped to ``allowed`` (non-positive values give the minimum).
    static func clamped(milliseconds: Int64) -> Duration {
        let lower = Int64(allowed.lowerBound.components.seconds) * 1000
        let upper = Int64(allowed.upperBound.components.seconds) * 1000
        return .milliseconds(min(max(milliseconds, lower), upper))
    }
}
