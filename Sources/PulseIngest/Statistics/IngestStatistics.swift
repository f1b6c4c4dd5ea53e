/// A snapshot of an ingest server's numbers (``IngestServer/statistics()``; `/stats` on the admin
/// endpoint).
public struct IngestStatistics: Sendable, Equatable {
    /// Open msgtrans connections (connected or not).
    public var openConnections: Int
    /// Batches waiting for their commit (the bounded ingest queue).
    public var pendingBatches: Int
    /// The ingest queue's capacity (``IngestConfiguration/maxPendingBatches``).
    public var pendingBatchCapacity: Int
    /// Durable commits of the store (each one fsync).
    public var commits: Int
    /// Jobs (batches and history updates) those commits carried.
    public var committedJobs: Int
    /// Non-zero response codes sent, by code, since start (including admission rejections).
    public var rejections: [Int: Int]
    /// Per-app numbers, keyed by App ID.
    public var apps: [String: IngestAppStatistics]
    /// Log lines the process could not write (``IngestConfiguration/droppedLogLines``).
    public var logLinesDropped: Int

    /// Creates a snapshot.
    public init(
        openConnections: Int = 0, pendingBatches: Int = 0, pendingBatchCapacity: Int = 0, commits: Int = 0,
        committedJobs: Int = 0, rejections: [Int: Int] = [:], apps: [String: IngestAppStatistics] = [:],
        logLinesDropped: Int = 0
    ) {
        self.logLinesDropped = logLinesDropped
        self.openConnections = openConnections
        self.pendingBatches = pendingBatches
        self.pendingBatchCapacity = pendingBatchCapacity
        self.commits = commits
        self.committedJobs = committedJobs
        self.rejections = rejections
        self.apps = apps
    }
}
