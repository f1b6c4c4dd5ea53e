public import PulseJSON

/// The streaming Pulse wire writers: the one place that knows the key order and the null rules of
/// an event, a crash report and a batch envelope (`docs/wire-protocol.md`). The models'
/// ``PulseJSONCodable/writeJSON(to:)`` and the gateway's single-pass mapping (which writes
/// attributes straight from the OTLP document) both go through them, so both produce the same
/// bytes. Every field is written; `nil` is an explicit `null`.
extension JSONWriter {
    /// One event of `CLIENT_EVENT_BATCH_UPLOAD`: `id`, `timestamp`, `sessionId`, `kind`, `name`,
    /// `source` (`module`, `imageUuid`), `attributes` (an object, written by `attributes`).
    @inlinable
    package mutating func pulseEvent(
        id: String, timestamp: Int64, sessionId: String, kind: PulseEventKind, name: String, module: String?,
        imageUuid: String?, attributes: (inout JSONWriter) -> Void
    ) {
        beginObject()
        field("id", id)
        field("timestamp", timestamp)
        field("sessionId", sessionId)
        field("kind", kind.rawValue)
        field("name", name)
        key("source")
        pulseEventSource(module: module, imageUuid: imageUuid)
        key("attributes")
        attributes(&self)
        endObject()
    }

    /// An event's `source` object: `module`, `imageUuid`.
    @inlinable
    package mutating func pulseEventSource(module: String?, imageUuid: String?) {
        beginObject()
        field("module", module)
        field("imageUuid", imageUuid)
        endObject()
    }

    /// One crash report of `CLIENT_CRASH_BATCH_UPLOAD`: `crashId`, `timestamp`, `sessionId`,
    /// `signal`, `exceptionType`, `message`, `stack` (written by `stack`), `build`, `attachments`
    /// (an array, its elements written by `attachments`), `attributes` (an object, written by
    /// `attributes`).
    @inlinable
    package mutating func pulseCrashReport(
        crashId: String, timestamp: Int64, sessionId: String?, signal: String?, exceptionType: String?,
        message: String?, stack: (inout JSONWriter) -> Void, build: CrashBuild,
        attachments: (inout JSONWriter) -> Void, attributes: (inout JSONWriter) -> Void
    ) {
        beginObject()
        field("crashId", crashId)
        field("timestamp", timestamp)
        field("sessionId", sessionId)
        field("signal", signal)
        field("exceptionType", exceptionType)
        field("message", message)
        key("stack")
        stack(&self)
        key("build")
        build.writeJSON(to: &self)
        key("attachments")
        beginArray()
        attachments(&self)
        endArray()
        key("attributes")
        attributes(&self)
        endObject()
    }

    /// A batch envelope: `identity` (written by `identity`), `itemsKey` (`events` or `crashes`, an
    /// array whose elements `items` writes), `batchId`.
    @inlinable
    package mutating func pulseBatch(
        identity: (inout JSONWriter) -> Void, itemsKey: String, items: (inout JSONWriter) -> Void, batchId: String
    ) {
        beginObject()
        key("identity")
        identity(&self)
        key(itemsKey)
        beginArray()
        items(&self)
        endArray()
        field("batchId", batchId)
        endObject()
    }
}
