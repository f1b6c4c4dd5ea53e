/// The identity a batch was uploaded under, as stored with the batch.
struct StoredIdentity: Sendable, Equatable {
    var appId: String
    var installationId: String
    var deviceId: String
    var userId: String?
    var appVersion: String?
    var buildNumber: Int64
    var sdkVersion: String
    var platform: String
    var packageName: String?
}

/// One event of a batch, reduced to the columns the store indexes plus its JSON as received.
struct EventRecord: Sendable {
    var id: String
    var timestampMs: Int64
    var sessionId: String
    var kind: String
    var name: String
    /// The `app.crash.id` attribute of a `Crash` event, if it has one.
    var crashId: String?
    /// The event object's bytes as the client sent them (valid UTF-8 JSON, checked by the decode).
    var json: ArraySlice<UInt8>
}

/// One crash report of a batch, reduced to the columns the store indexes plus its JSON as received.
struct CrashRecord: Sendable {
    var crashId: String
    var timestampMs: Int64
    var sessionId: String?
    /// The report's bytes as the client sent them (valid UTF-8 JSON, checked by the decode).
    var json: ArraySlice<UInt8>
}

/// A decoded batch ready to be committed.
struct BatchRecord<Item: Sendable>: Sendable {
    var batchId: String
    var connectionId: String?
    var identity: StoredIdentity
    var items: [Item]
}

/// What committing a batch did.
enum BatchOutcome: Sendable, Equatable {
    /// The batch was new: `stored` items were inserted, `duplicates` were already stored under
    /// another batch.
    case stored(stored: Int, duplicates: Int)
    /// The batch id was already stored for this app: nothing was written.
    case duplicateBatch
}
