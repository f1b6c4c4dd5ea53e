/// What the store holds for one app (returned by ``IngestServer/counts(app:)``).
public struct IngestCounts: Sendable, Equatable {
    /// Distinct event batches stored.
    public var eventBatches: Int
    /// Distinct crash batches stored.
    public var crashBatches: Int
    /// Distinct events stored.
    public var events: Int
    /// Distinct crash reports stored.
    public var crashes: Int
    /// Connections recorded in the history.
    public var connections: Int

    /// Creates counts.
    public init(eventBatches: Int = 0, crashBatches: Int = 0, events: Int = 0, crashes: Int = 0, connections: Int = 0) {
        self.eventBatches = eventBatches
        self.crashBatches = crashBatches
        self.events = events
        self.crashes = crashes
        self.connections = connections
    }
}
