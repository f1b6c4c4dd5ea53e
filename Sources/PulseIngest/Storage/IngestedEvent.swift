/// An event as stored by the ingest server (returned by ``IngestServer/events(app:limit:)``).
public struct IngestedEvent: Sendable, Equatable {
    /// The App ID (`identity.projectId` of the batch).
    public var appId: String
    /// The event id (`id`), unique per app.
    public var eventId: String
    /// The batch that first delivered the event.
    public var batchId: String
    /// The installation that sent it.
    public var installationId: String
    /// The device that sent it.
    public var deviceId: String
    /// The session it was recorded in.
    public var sessionId: String
    /// The event kind, such as `Analytics`.
    public var kind: String
    /// The event name.
    public var name: String
    /// When it was recorded, epoch milliseconds (client clock).
    public var timestampMs: Int64
    /// When the server committed it, epoch milliseconds (server clock).
    public var receivedAtMs: Int64
    /// The event object as the client sent it (rows stored before the ingest kept bytes as
    /// received hold its canonical JSON; so does an event whose bytes could not be located).
    public var json: String

    /// Creates an event value.
    public init(
        appId: String, eventId: String, batchId: String, installationId: String, deviceId: String, sessionId: String,
        kind: String, name: String, timestampMs: Int64, receivedAtMs: Int64, json: String
    ) {
        self.appId = appId
        self.eventId = eventId
        self.batchId = batchId
        self.installationId = installationId
        self.deviceId = deviceId
        self.sessionId = sessionId
        self.kind = kind
        self.name = name
        self.timestampMs = timestampMs
        self.receivedAtMs = receivedAtMs
        self.json = json
    }
}
