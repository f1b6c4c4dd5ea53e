/// An event as stored by the ingest server (returned by ``IngestServer/events(app:limit:)``).
package struct IngestedEvent: Sendable, Equatable {
    /// The App ID (`identity.projectId` of the batch).
    package var appId: String
    /// The event id (`id`), unique per app.
    package var eventId: String
    /// The batch that first delivered the event.
    package var batchId: String
    /// The installation that sent it.
    package var installationId: String
    /// The device that sent it.
    package var deviceId: String
    /// The session it was recorded in.
    package var sessionId: String
    /// The event kind, such as `Analytics`.
    package var kind: String
    /// The event name.
    package var name: String
    /// When it was recorded, epoch milliseconds (client clock).
    package var timestampMs: Int64
    /// When the server committed it, epoch milliseconds (server clock).
    package var receivedAtMs: Int64
    /// The event object as the client sent it (rows stored before the ingest kept bytes as
    /// received hold its canonical JSON; so does an event whose bytes could not be located).
    package var json: String

    /// Creates an event value.
    package init(
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
