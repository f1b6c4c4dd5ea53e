import PulseJSON
import PulseKit
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

    /// The parsers batch decoding shares (a parser keeps its buffers between documents); the
    /// limits are those of `JSONParser()`, which decoded batches before.
    static let parsers = JSONParserPool(capacity: 8)

    /// An event batch reduced to what the store needs: each event's indexed fields and its JSON
    /// exactly as received (a slice of `payload`, validated by the decode; see ``receivedItems(_:key:count:)``).
    static func decodeEventBatch(
        _ payload: [UInt8], connectionId: String
    ) throws(PulseProtocolError) -> BatchRecord<EventRecord> {
        // Only the indexed fields are materialised; the rules are those of `EventBatch`.
        let batch = try parsers.withParser { parser throws(PulseProtocolError) in
            try EventBatchSummary(decodingJSON: payload, parser: parser)
        }
        let received: [ArraySlice<UInt8>]
        if let slices = receivedItems(payload, key: "events", count: batch.events.count) {
            received = slices
        } else {
            received = try EventBatch(decodingJSON: payload).events.map { $0.encodeJSON()[...] }
        }
        var records: [EventRecord] = []
        records.reserveCapacity(batch.events.count)
        for (event, json) in zip(batch.events, received) {
            records.append(
                EventRecord(
                    id: event.id, timestampMs: event.timestamp, sessionId: event.sessionId, kind: event.kind.rawValue,
                    name: event.name, crashId: event.kind == .crash ? event.crashIdAttribute : nil, json: json))
        }
        return BatchRecord(
            batchId: batch.batchId, connectionId: connectionId, identity: stored(batch.identity), items: records)
    }

    /// A crash batch reduced to what the store needs: each report's indexed fields and its JSON as
    /// received.
    static func decodeCrashBatch(
        _ payload: [UInt8], connectionId: String
    ) throws(PulseProtocolError) -> BatchRecord<CrashRecord> {
        let batch = try parsers.withParser { parser throws(PulseProtocolError) in
            try CrashBatch(decodingJSON: payload, parser: parser)
        }
        let received = receivedItems(payload, key: "crashes", count: batch.crashes.count)
        let records = batch.crashes.enumerated().map { index, crash in
            CrashRecord(
                crashId: crash.crashId, timestampMs: crash.timestamp, sessionId: crash.sessionId,
                json: received?[index] ?? crash.encodeJSON()[...])
        }
        return BatchRecord(
            batchId: batch.batchId, connectionId: connectionId, identity: stored(batch.identity), items: records)
    }

    /// The bytes of each element of the root member `key` of `payload` (already parsed and decoded,
    /// so each slice is one valid JSON object the decode accepted), or `nil` when they cannot be
    /// told apart byte for byte (an escaped member name; a count that differs from the decoded
    /// one): then the caller stores the canonical re-encoding instead, which means the same.
    private static func receivedItems(_ payload: [UInt8], key: String, count: Int) -> [ArraySlice<UInt8>]? {
        guard let ranges = JSONRawSpans.arrayElements(ofMember: key, in: payload), ranges.count == count else {
            return nil
        }
        return ranges.map { payload[$0] }
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
