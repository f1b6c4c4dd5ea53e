/// Per-app numbers of an ``IngestStatistics`` snapshot.
public struct IngestAppStatistics: Sendable, Equatable {
    /// Connected sessions (CLIENT_CONNECT succeeded, connection still open).
    public var sessions: Int
    /// Sessions whose presence TTL has not expired.
    public var present: Int
    /// Distinct event batches stored (including those stored before this process started).
    public var eventBatches: Int
    /// Distinct crash batches stored (including those stored before this process started).
    public var crashBatches: Int
    /// Replayed batches answered without storing anything, since start.
    public var duplicateBatches: Int
    /// Distinct events stored (including those stored before this process started).
    public var events: Int
    /// Events skipped because their id was already stored, since start.
    public var duplicateEvents: Int
    /// Distinct crash reports stored (including those stored before this process started).
    public var crashes: Int
    /// Crash reports skipped because their crash id was already stored, since start.
    public var duplicateCrashes: Int

    /// Creates zeroed statistics.
    public init() {
        sessions = 0
        present = 0
        eventBatches = 0
        crashBatches = 0
        duplicateBatches = 0
        events = 0
        duplicateEvents = 0
        crashes = 0
        duplicateCrashes = 0
    }
}
