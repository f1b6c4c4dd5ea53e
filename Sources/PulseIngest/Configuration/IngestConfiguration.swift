package import MsgTransRuntime
package import PulseKit

/// Everything an ``IngestServer`` needs to start.
///
/// ```swift
/// var configuration = IngestConfiguration(dataDirectory: "/var/lib/pulsegate/ingest")
/// configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
/// configuration.policy = try IngestPolicy.load(path: "ingest-config.json")
/// let server = try await IngestServer.start(configuration)
/// ```
package struct IngestConfiguration: Sendable {
    /// The default msgtrans address, `127.0.0.1:6000`.
    package static let defaultListen = IngestListenAddress(host: "127.0.0.1", port: 6000)

    /// Where Pulse clients connect (msgtrans over TCP). Default `127.0.0.1:6000`; port 0 picks a
    /// free port (see ``IngestServer/port``).
    package var listen: IngestListenAddress
    /// The directory of the SQLite database (`ingest.sqlite`); created if missing.
    package var dataDirectory: String
    /// Allowed apps, packages, policy snapshots and releases.
    package var policy: IngestPolicy
    /// The config file ``policy`` was loaded from, if any: ``IngestServer/reloadPolicyFile()`` and the
    /// admin endpoint's `POST /reload` re-read it (the SIGHUP equivalent). `nil` disables both.
    package var policyFile: String?
    /// The read-only admin HTTP endpoint (`/stats`, `/events`, `POST /control`); `nil` for none.
    package var admin: IngestListenAddress?
    /// The wall clock for presence, history and timestamps (inject a manual clock in tests).
    package var clock: PulseClock
    /// How long a heartbeat keeps a connection present. Default 150 s.
    package var presenceTTLMs: Int64
    /// Batches accepted for commit and not yet committed, across all connections. A batch beyond
    /// it is answered with 429 at once. Default 1,024.
    package var maxPendingBatches: Int
    /// The most batches (and history updates) sharing one commit. Default 512.
    package var maxGroupCommit: Int
    /// How long a write waits for a database lock held by another process before the request is
    /// answered with 503. Default 5 s.
    package var storageBusyTimeout: Duration
    /// How long a control RPC sent from the admin endpoint waits for each client. Default 10 s.
    package var controlTimeout: Duration
    /// How long an accepted connection may take to complete `CLIENT_CONNECT` (its first frame sent
    /// and the connect answered with success) before it is closed without a reply. Default 10 s.
    /// It replaces ``MsgTransServerConfiguration/establishTimeout`` of ``transport``.
    package var connectDeadline: Duration
    /// Settings of the msgtrans server (connection limits, timeouts, shutdown grace period, the cap
    /// on bytes of incomplete frames buffered across all connections,
    /// ``MsgTransServerConfiguration/maxPartialFrameBytes``, default 256 MiB). The ingest server
    /// installs its own overload (429) and failure (400/500) responders.
    /// `connection.frameLimits.maxDecompressedBytes` (16 MiB) is the ingest's one payload limit:
    /// a request whose plaintext is larger, whether it arrived plain or compressed, is answered
    /// 400 `payload larger than N bytes (uncompressed)`.
    package var transport: MsgTransServerConfiguration
    /// Log lines the process could not write so far (a full disk, a closed pipe), reported as
    /// `logLinesDropped` on `/stats`; `pulsegate ingest` passes its standard streams' count.
    package var droppedLogLines: @Sendable () -> Int
    /// The build's version, reported as `pulsegate_build_info` on the admin endpoint's `/metrics`.
    package var version: String

    /// Creates a configuration with the documented defaults and no allowed app.
    package init(dataDirectory: String, policy: IngestPolicy = IngestPolicy()) {
        listen = Self.defaultListen
        self.dataDirectory = dataDirectory
        self.policy = policy
        policyFile = nil
        admin = nil
        clock = .system
        presenceTTLMs = 150_000
        maxPendingBatches = 1_024
        maxGroupCommit = 512
        storageBusyTimeout = .seconds(5)
        controlTimeout = .seconds(10)
        connectDeadline = .seconds(10)
        transport = MsgTransServerConfiguration()
        droppedLogLines = { 0 }
        version = "unknown"
    }
}
