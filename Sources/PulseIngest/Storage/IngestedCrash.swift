/// A crash report as stored by the ingest server (returned by ``IngestServer/crashes(app:limit:)``).
public struct IngestedCrash: Sendable, Equatable {
    /// The App ID.
    public var appId: String
    /// The `app.crash.id` (`crashId`), unique per app.
    public var crashId: String
    /// The batch that first delivered the report.
    public var batchId: String
    /// The installation that sent it.
    public var installationId: String
    /// The session that crashed, if known.
    public var sessionId: String?
    /// When the crash happened, epoch milliseconds (client clock).
    public var timestampMs: Int64
    /// When the server committed it, epoch milliseconds (server clock).
    public var receivedAtMs: Int64
    /// The crash report object as the client sent it (rows stored before the ingest kept bytes as
    /// received hold its canonical JSON; so does a report whose bytes could not be located).
    public var json: String

    /// Creates a crash value.
    public init(
        appId: String, crashId: String, batchId: String, installationId: String, sessionId: String?,
        timestampMs: Int64, receivedAtMs: Int64, json: String
    ) {
        self.appId = appId
        self.crashId = crashId
        self.batchId = batchId
        self.installationId = installationId
        self.sessionId = sessionId
        self.timestampMs = timestampMs
        self.receivedAtMs = receivedAtMs
        self.json = json
    }
}
