public import PulseJSON
import PulseKit

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
        withRun { run in
            run.pulseItemHead(idKey: "id", id: id, timestamp: timestamp, sessionId: sessionId)
            run.key(verbatim: "kind")
            run.string(kind.rawValue)
            run.key(verbatim: "name")
            run.string(name)
            run.key(verbatim: "source")
            run.pulseEventSource(module: module, imageUuid: imageUuid)
            run.key(verbatim: "attributes")
        }
        attributes(&self)
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
        withRun { run in
            run.pulseItemHead(idKey: "crashId", id: crashId, timestamp: timestamp, sessionId: sessionId)
            run.key(verbatim: "signal")
            run.string(orNull: signal)
            run.key(verbatim: "exceptionType")
            run.string(orNull: exceptionType)
            run.key(verbatim: "message")
            run.string(orNull: message)
            run.key(verbatim: "stack")
        }
        stack(&self)
        key(verbatim: "build")
        build.writeJSON(to: &self)
        key(verbatim: "attachments")
        beginArray()
        attachments(&self)
        withRun { run in
            run.endArray()
            run.key(verbatim: "attributes")
        }
        attributes(&self)
        endObject()
    }

    /// A batch envelope: `identity` (written by `identity`), `itemsKey` (`events` or `crashes`, an
    /// array whose elements `items` writes), `batchId`.
    @inlinable
    package mutating func pulseBatch(
        identity: (inout JSONWriter) -> Void, itemsKey: String, items: (inout JSONWriter) -> Void, batchId: String
    ) {
        withRun { run in
            run.beginObject()
            run.key(verbatim: "identity")
        }
        identity(&self)
        withRun { run in
            run.key(itemsKey)
            run.beginArray()
        }
        items(&self)
        withRun { run in
            run.endArray()
            run.key(verbatim: "batchId")
            run.string(batchId)
            run.endObject()
        }
    }
}

extension JSONWriter.Run {
    /// How an event and a crash report begin: `{`, the id under `idKey`, `timestamp`, `sessionId`
    /// (`null` for `nil`).
    @inlinable @inline(__always)
    package mutating func pulseItemHead(idKey: StaticString, id: String, timestamp: Int64, sessionId: String?) {
        beginObject()
        key(verbatim: idKey)
        string(id)
        key(verbatim: "timestamp")
        int(timestamp)
        key(verbatim: "sessionId")
        string(orNull: sessionId)
    }

    /// An event's `source` object: `module`, `imageUuid`.
    @inlinable
    package mutating func pulseEventSource(module: String?, imageUuid: String?) {
        beginObject()
        key(verbatim: "module")
        string(orNull: module)
        key(verbatim: "imageUuid")
        string(orNull: imageUuid)
        endObject()
    }

    /// Writes a string value, or `null` for `nil` (the value half of `field(_:_:)` for a `String?`).
    @inlinable @inline(__always)
    package mutating func string(orNull value: String?) {
        if let value { string(value) } else { null() }
    }
}

/// The rules of one batch kind, the events' or the crashes': the envelope written by
/// ``JSONWriter/pulseBatch(identity:itemsKey:items:batchId:)`` and read back with `identity`, a
/// non-empty array at `itemsKey` (its elements' errors prefixed `<itemsKey>[i]`) and `batchId`, all
/// required.
struct PulseBatchRules: Sendable {
    /// `events` or `crashes`.
    let itemsKey: String
    /// What an empty item array throws.
    let empty: PulseProtocolError
    /// The writer capacity reserved per item by ``encode(_:_:_:)``.
    let bytesPerItem: Int

    init(itemsKey: String, item noun: String, bytesPerItem: Int) {
        self.itemsKey = itemsKey
        self.empty = PulseProtocolError(.invalidValue, "\(itemsKey): a batch must contain at least one \(noun)")
        self.bytesPerItem = bytesPerItem
    }

    func decode<Item: WireReadable>(_ node: JSONNode) throws(PulseProtocolError) -> (BatchIdentity, [Item], String) {
        let o = try JSONObjectReader(node)
        let identity: BatchIdentity = try o.value("identity")
        let items: [Item] = try o.value(itemsKey)
        if items.isEmpty {
            throw empty
        }
        return (identity, items, try o.value("batchId"))
    }

    func write<Item: WireWritable>(
        _ identity: BatchIdentity, _ items: [Item], _ batchId: String, to writer: inout JSONWriter
    ) {
        writer.pulseBatch(
            identity: { identity.writeJSON(to: &$0) }, itemsKey: itemsKey,
            items: { writer in
                for item in items { item.writeWire(to: &writer) }
            }, batchId: batchId)
    }

    /// The canonical JSON bytes of a batch, written with room for its items reserved up front.
    func encode<Item: WireWritable>(_ identity: BatchIdentity, _ items: [Item], _ batchId: String) -> [UInt8] {
        var writer = JSONWriter(capacity: bytesPerItem * max(items.count, 1))
        write(identity, items, batchId, to: &writer)
        return writer.bytes
    }
}
