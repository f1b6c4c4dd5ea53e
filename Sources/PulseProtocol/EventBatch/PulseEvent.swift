public import PulseJSON

/// One telemetry record inside `CLIENT_EVENT_BATCH_UPLOAD`.
///
/// Wire keys in canonical order: `id` (the database idempotency key; SDK ids are 32 lowercase hex
/// characters), `timestamp` (epoch ms when recorded), `sessionId`, `kind`, `name`, `source` (absent or
/// `null` reads as both-`null`), `attributes` (an object of any JSON values; absent or `null` reads
/// as `{}`). `id`, `timestamp`, `sessionId`, `kind` and `name` are required.
public struct PulseEvent: Sendable, Hashable, PulseJSONCodable, WireReadable, WireWritable {
    /// The idempotency key; replays with the same id are stored once.
    public var id: String
    /// When the event was recorded, epoch milliseconds.
    public var timestamp: Int64
    /// The app session the event belongs to.
    public var sessionId: String
    /// The record kind.
    public var kind: PulseEventKind
    /// The event name, for example `screen_view`.
    public var name: String
    /// Where the event was recorded.
    public var source: EventSource
    /// Free-form attributes in document order (duplicates kept as received).
    public var attributes: [JSONMember]

    /// Creates an event.
    public init(
        id: String, timestamp: Int64, sessionId: String, kind: PulseEventKind, name: String,
        source: EventSource = .unknown, attributes: [JSONMember] = []
    ) {
        self.id = id
        self.timestamp = timestamp
        self.sessionId = sessionId
        self.kind = kind
        self.name = name
        self.source = source
        self.attributes = attributes
    }

    /// The value of the first attribute named `key`.
    public func attribute(_ key: String) -> JSONValue? {
        attributes.first { $0.key == key }?.value
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        // The rules of every field but the attributes' contents are the summary's.
        let summary = try PulseEventSummary(o)
        id = summary.id
        timestamp = summary.timestamp
        sessionId = summary.sessionId
        kind = summary.kind
        name = summary.name
        source = summary.source
        attributes = try o.members("attributes")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.pulseEvent(
            id: id, timestamp: timestamp, sessionId: sessionId, kind: kind, name: name, module: source.module,
            imageUuid: source.imageUuid
        ) { $0.value(.object(attributes)) }
    }
}

/// An event as a receiver that keeps the event's bytes as received needs it: the fields it
/// indexes, read and validated by exactly the rules of ``PulseEvent/init(jsonNode:)`` (one accepts
/// what the other accepts, with the same errors), without materialising `attributes`, which is
/// only checked to be an object (absent or `null` reads as `{}`).
public struct PulseEventSummary: Sendable, Hashable, WireReadable {
    /// The idempotency key.
    public var id: String
    /// When the event was recorded, epoch milliseconds.
    public var timestamp: Int64
    /// The app session the event belongs to.
    public var sessionId: String
    /// The record kind.
    public var kind: PulseEventKind
    /// The event name.
    public var name: String
    /// Where the event was recorded.
    public var source: EventSource
    /// The value of the first attribute named `app.crash.id` when it is a string (what
    /// `attribute("app.crash.id")` of the decoded ``PulseEvent`` would give as `.string`).
    public var crashIdAttribute: String?

    /// Reads an event from a parsed JSON node.
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        try self.init(try JSONObjectReader(node))
    }

    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        try self.init(jsonNode: node)
    }

    /// The field rules of both event decoders (``PulseEvent/init(jsonNode:)`` reads through this).
    init(_ o: JSONObjectReader) throws(PulseProtocolError) {
        id = try o.value("id")
        timestamp = try o.value("timestamp")
        sessionId = try o.value("sessionId")
        kind = try o.value("kind")
        name = try o.value("name")
        source = try o.nullable("source") ?? .unknown
        crashIdAttribute = nil
        guard let attributes = try o.objectNode("attributes") else { return }
        for (key, value) in attributes.memberNodes where key.stringEquals("app.crash.id") {
            crashIdAttribute = value.string
            break
        }
    }
}
