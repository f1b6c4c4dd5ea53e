package import PulseKit

/// Settings of a ``MsgTransServer``.
package struct MsgTransServerConfiguration: Sendable {
    /// Settings of every accepted connection.
    package var connection: MsgTransConfiguration
    /// Open connections at most; further connections are accepted and closed at once (counted in
    /// ``MsgTransStatistics/Snapshot/rejectedConnections``). Default 16,384.
    package var maxConnections: Int
    /// The `listen(2)` backlog (the kernel caps it at `net.core.somaxconn`). Default 4096.
    package var listenBacklog: Int
    /// How long ``MsgTransServer/shutdown()`` waits for running handlers to answer and output to
    /// flush before it closes the remaining connections. Default 10 s.
    package var shutdownGracePeriod: Duration
    /// How long an accepted connection may take to be established — marked with
    /// ``MsgTransConnection/markEstablished()`` by the application once its handshake succeeded —
    /// before it is closed (counted in ``MsgTransStatistics/Snapshot/establishTimeouts``). `nil`, the
    /// default, or a duration that is not positive, for no limit.
    package var establishTimeout: Duration?
    /// The most bytes of incomplete inbound frames buffered across all connections of the server.
    /// A connection whose read would take the total over it is closed (counted in
    /// ``MsgTransStatistics/Snapshot/partialFrameCapCloses``); complete frames are not counted. It
    /// should leave room for at least one frame of the largest accepted size
    /// (``FrameLimits/maxPayloadBytes``); 0 or less turns the cap off. Default 256 MiB.
    package var maxPartialFrameBytes: Int
    /// The clock of every deadline on the loop the server creates for itself (a server started on
    /// a given loop uses that loop's clock). Default ``PulseKit/PulseClock/system``.
    package var clock: PulseClock

    /// Creates a configuration with the documented defaults.
    package init() {
        connection = MsgTransConfiguration()
        maxConnections = 16_384
        listenBacklog = 4096
        shutdownGracePeriod = .seconds(10)
        establishTimeout = nil
        maxPartialFrameBytes = 256 << 20
        clock = .system
    }
}
