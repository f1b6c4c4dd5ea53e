/// Per-app numbers of an ``IngestStatistics`` snapshot.
package struct IngestAppStatistics: Sendable, Equatable {
    /// Connected sessions (CLIENT_CONNECT succeeded, connection still open).
    package var sessions: Int
    /// Sessions whose presence TTL has not expired.
    package var present: Int
    /// Distinct event batches stored (including those stored before this process started).
    package var eventBatches: Int
    /// Distinct crash batches stored (including those stored before this process started).
    package var crashBatches: Int
    /// Replayed batches answered without storing anything, since start.
    package var duplicateBatches: Int
    /// Distinct events stored (including those stored before this process started).
    package var events: Int
    /// Events skipped because their id was already stored, since start.
    package var duplicateEvents: Int
    /// Distinct crash reports stored (including those stored before this process started).
    package var crashes: Int
    /// Crash reports skipped because their crash id was already stored, since start.
    package var duplicateCrashes: Int

    /// Creates zeroed statistics.
    package init() {
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
