import MsgTrans
import MsgTransRuntime
import PulseCompression
import PulseKit
import PulseStorage

extension IngestCore {
    /// A snapshot of the server's numbers; `transport` supplies the open connection count.
    func statistics(transport: MsgTransStatistics) -> IngestStatistics {
        let now = clock.wallClockMilliseconds()
        let (apps, rejections) = counters.snapshot(census: registry.census(at: now), knownApps: policy.apps.keys)
        let storage = store.executor.statistics
        let contexts = PayloadCompressor.contextStatistics
        return IngestStatistics(
            openConnections: transport.snapshot().openConnections, pendingBatches: pending.pending,
            pendingBatchCapacity: pending.capacity, commits: storage.commits,
            committedJobs: storage.groupCommittedJobs, rejections: rejections, apps: apps,
            logLinesDropped: droppedLogLines(), groupCommits: storage.groupCommits,
            largestGroupCommit: storage.largestGroupCommit,
            decompressionContextsCreated: contexts.zstdContextsCreated + contexts.zlibStreamsCreated,
            decompressionContextsReused: contexts.zstdContextsReused + contexts.zlibStreamsReused)
    }
}
