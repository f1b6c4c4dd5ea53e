/// Settings of a ``MsgTransServer``.
public struct MsgTransServerConfiguration: Sendable {
    /// Settings of every accepted connection.
    public var connection: MsgTransConfiguration
    /// Open connections at most; further connections are accepted and closed at once (counted in
    /// ``MsgTransStatistics/Snapshot/rejectedConnections``). Default 16,384.
    public var maxConnections: Int
    /// The `listen(2)` backlog (the kernel caps it at `net.core.somaxconn`). Default 4096.
    public var listenBacklog: Int
    /// How long ``MsgTransServer/shutdown()`` waits for running handlers to answer and output to
    /// flush before it closes the remaining connections. Default 10 s.
    public var shutdownGracePeriod: Duration

    /// Creates a configuration with the documented defaults.
    public init() {
        connection = MsgTransConfiguration()
        maxConnections = 16_384
        listenBacklog = 4096
        shutdownGracePeriod = .seconds(10)
    }
}
