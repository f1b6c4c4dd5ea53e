/// A snapshot of an ingest server's numbers (``IngestServer/statistics()``; `/stats` on the admin
/// endpoint).
package struct IngestStatistics: Sendable, Equatable {
    /// Open msgtrans connections (connected or not).
    package var openConnections: Int
    /// Batches waiting for their commit (the bounded ingest queue).
    package var pendingBatches: Int
    /// The ingest queue's capacity (``IngestConfiguration/maxPendingBatches``).
    package var pendingBatchCapacity: Int
    /// Durable commits of the store (each one fsync).
    package var commits: Int
    /// Jobs (batches and history updates) those commits carried.
    package var committedJobs: Int
    /// Group commits of the store (batches and history updates committed together, one fsync
    /// each); `committedJobs / groupCommits` is the jobs shared per commit.
    package var groupCommits: Int
    /// The most jobs one group commit carried: above 1 when pipelined requests of a connection, or
    /// requests of several connections, shared one fsync.
    package var largestGroupCommit: Int
    /// Decompression contexts (zstd and zlib) created by this process (msgtrans payloads;
    /// ``MsgTrans/PayloadCompressor/contextStatistics``): stays small because contexts are reused.
    package var decompressionContextsCreated: Int
    /// Decompressions that reused a pooled context instead of creating one.
    package var decompressionContextsReused: Int
    /// Non-zero response codes sent, by code, since start (including admission rejections).
    package var rejections: [Int: Int]
    /// Per-app numbers, keyed by App ID.
    package var apps: [String: IngestAppStatistics]
    /// Log lines the process could not write (``IngestConfiguration/droppedLogLines``).
    package var logLinesDropped: Int

    /// Creates a snapshot.
    package init(
        openConnections: Int = 0, pendingBatches: Int = 0, pendingBatchCapacity: Int = 0, commits: Int = 0,
        committedJobs: Int = 0, rejections: [Int: Int] = [:], apps: [String: IngestAppStatistics] = [:],
        logLinesDropped: Int = 0, groupCommits: Int = 0, largestGroupCommit: Int = 0,
        decompressionContextsCreated: Int = 0, decompressionContextsReused: Int = 0
    ) {
        self.groupCommits = groupCommits
        self.largestGroupCommit = largestGroupCommit
        self.decompressionContextsCreated = decompressionContextsCreated
        self.decompressionContextsReused = decompressionContextsReused
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
