/// A crash report as stored by the ingest server (returned by ``IngestServer/crashes(app:limit:)``).
package struct IngestedCrash: Sendable, Equatable {
    /// The App ID.
    package var appId: String
    /// The `app.crash.id` (`crashId`), unique per app.
    package var crashId: String
    /// The batch that first delivered the report.
    package var batchId: String
    /// The installation that sent it.
    package var installationId: String
    /// The session that crashed, if known.
    package var sessionId: String?
    /// When the crash happened, epoch milliseconds (client clock).
    package var timestampMs: Int64
    /// When the server committed it, epoch milliseconds (server clock).
    package var receivedAtMs: Int64
    /// The crash report object as the client sent it (rows stored before the ingest kept bytes as
    /// received hold its canonical JSON; so does a report whose bytes could not be located).
    package var json: String

    /// Creates a crash value.
    package init(
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
