/// What the store holds for one app (returned by ``IngestServer/counts(app:)``).
package struct IngestCounts: Sendable, Equatable {
    /// Distinct event batches stored.
    package var eventBatches: Int
    /// Distinct crash batches stored.
    package var crashBatches: Int
    /// Distinct events stored.
    package var events: Int
    /// Distinct crash reports stored.
    package var crashes: Int
    /// Connections recorded in the history.
    package var connections: Int

    /// Creates counts.
    package init(eventBatches: Int = 0, crashBatches: Int = 0, events: Int = 0, crashes: Int = 0, connections: Int = 0)
    {
        self.eventBatches = eventBatches
        self.crashBatches = crashBatches
        self.events = events
        self.crashes = crashes
        self.connections = connections
    }
}
