/// The counters of a group-commit executor, the one shape both have: PulseStorage's
/// `SQLiteExecutor` and PulsePostgres's `PostgresExecutor` (whose jobs share one transaction and
/// one durable `COMMIT`), for observability and benchmarks.
///
/// Jobs per commit for group commit is `groupSizeSum / groupCommits`.
package struct GroupCommitStatistics: Sendable, Equatable {
    /// Successful `COMMIT`s (group commits included), each one durable (an fsync of SQLite's WAL, a
    /// WAL flush of the PostgreSQL server as `synchronous_commit` makes it).
    package var commits = 0
    /// Successful `COMMIT`s of group-commit batches.
    package var groupCommits = 0
    /// Group-commit jobs whose changes were committed.
    package var groupCommittedJobs = 0
    /// Group-commit jobs that failed (threw, or their batch failed).
    package var groupFailedJobs = 0
    /// The most jobs committed together in one batch.
    package var largestGroupCommit = 0
    /// Committed group-commit batches by size: `groupSizeCounts[i]` counts the batches of more than
    /// `groupSizeBounds[i - 1]` and at most `groupSizeBounds[i]` jobs; the last element counts larger ones.
    package var groupSizeCounts = [Int](repeating: 0, count: GroupCommitStatistics.groupSizeBounds.count + 1)
    /// Jobs taken by committed group-commit batches, including jobs that threw inside a batch that
    /// committed (they shared its commit): jobs per commit is `groupSizeSum / groupCommits`.
    package var groupSizeSum = 0
    /// Connections made, the first and every reconnect (an executor that reconnects: PostgreSQL's;
    /// SQLite's opens its one connection before it counts, and leaves this 0).
    package var connects = 0

    /// The upper bounds of ``groupSizeCounts``.
    package static let groupSizeBounds = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

    /// Creates zeroed statistics.
    package init() {}

    /// Counts the outcome of one group-commit batch of `groupSize` jobs: `committed` of them
    /// committed and `failed` failed; `didCommit` when its `COMMIT` succeeded.
    package mutating func recordGroup(committed: Int, failed: Int, groupSize: Int, didCommit: Bool) {
        if didCommit {
            commits += 1
            groupCommits += 1
            largestGroupCommit = max(largestGroupCommit, groupSize)
            let bucket = Self.groupSizeBounds.firstIndex { groupSize <= $0 } ?? Self.groupSizeBounds.count
            groupSizeCounts[bucket] += 1
            groupSizeSum += groupSize
        }
        groupCommittedJobs += committed
        groupFailedJobs += failed
    }
}
