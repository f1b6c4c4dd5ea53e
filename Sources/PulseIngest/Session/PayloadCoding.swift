import PulseJSON
import PulseProtocol

/// Decoding of request payloads and encoding of result data, in one place.
///
/// Everything goes through PulseProtocol's fast codecs (simdjson via PulseJSON, canonical key
/// order on output); Foundation's JSON is never on a request path.
enum PayloadCoding {
    static func decodeConnect(_ payload: [UInt8]) throws(PulseProtocolError) -> ConnectRequest {
        try ConnectRequest(decodingJSON: payload)
    }

    static func decodeHeartbeat(_ payload: [UInt8]) throws(PulseProtocolError) -> HeartbeatRequest {
        try HeartbeatRequest(decodingJSON: payload)
    }

    static func decodeConfigPull(_ payload: [UInt8]) throws(PulseProtocolError) -> ConfigPullRequest {
        try ConfigPullRequest(decodingJSON: payload)
    }

    static func decodeUpdateCheck(_ payload: [UInt8]) throws(PulseProtocolError) -> UpdateCheckRequest {
        try UpdateCheckRequest(decodingJSON: payload)
    }

    /// A control RPC request; a malformed route fails here (400), an unsupported one later (404).
    static func decodeControl(_ payload: [UInt8]) throws(PulseProtocolError) -> ControlRPCRequest {
        try ControlRPCRequest(decodingJSON: payload)
    }

    /// An event batch reduced to what the store needs: each event's indexed fields and canonical JSON.
    static func decodeEventBatch(
        _ payload: [UInt8], connectionId: String
    ) throws(PulseProtocolError) -> BatchRecord<EventRecord> {
        let batch = try EventBatch(decodingJSON: payload)
        var records: [EventRecord] = []
        records.reserveCapacity(batch.events.count)
        var writer = JSONWriter(capacity: 512)
        for event in batch.events {
            writer.reset()
            event.writeJSON(to: &writer)
            records.append(
                EventRecord(
                    id: event.id, timestampMs: event.timestamp, sessionId: event.sessionId, kind: event.kind.rawValue,
                    name: event.name, crashId: crashId(of: event),
                    json: String(decoding: writer.bytes, as: UTF8.self)))
        }
        return BatchRecord(
            batchId: batch.batchId, connectionId: connectionId, identity: stored(batch.identity), items: records)
    }

    /// A crash batch reduced to what the store needs.
    static func decodeCrashBatch(
        _ payload: [UInt8], connectionId: String
    ) throws(PulseProtocolError) -> BatchRecord<CrashRecord> {
        let batch = try CrashBatch(decodingJSON: payload)
        let records = batch.crashes.map { crash in
            CrashRecord(
                crashId: crash.crashId, timestampMs: crash.timestamp, sessionId: crash.sessionId,
                json: String(decoding: crash.encodeJSON(), as: UTF8.self))
        }
        return BatchRecord(
            batchId: batch.batchId, connectionId: connectionId, identity: stored(batch.identity), items: records)
    }

    /// The `app.crash.id` attribute of a `Crash` event (the crash's identity across reports).
    private static func crashId(of event: PulseEvent) -> String? {
        guard event.kind == .crash,
            case .string(let id)? = event.attributes.first(where: { $0.key == "app.crash.id" })?.value
        else { return nil }
        return id
    }

    private static func stored(_ identity: BatchIdentity) -> StoredIdentity {
        StoredIdentity(
            appId: identity.projectId, installationId: identity.installationId, deviceId: identity.deviceId,
            userId: identity.userId, appVersion: identity.appVersion, buildNumber: identity.buildNumber,
            sdkVersion: identity.sdkVersion, platform: identity.platform, packageName: identity.packageName)
    }

    /// A short, payload-free description of a decoding error for a 400 message (the field path and
    /// rule, never the offending bytes).
    static func summary(of error: PulseProtocolError) -> String {
        error.message
    }

    /// Quotes a short client-supplied token for a message: at most 64 characters, control
    /// characters dropped.
    static func quoted(_ token: String) -> String {
        let cleaned = token.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(64)
        var text = "\""
        text.unicodeScalars.append(contentsOf: cleaned)
        return text + (token.unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}
