import Foundation
import PulseJSON
import PulseProtocol

/// Decoding of request payloads and encoding of result data, in one place.
///
/// Batches use PulseProtocol's fast codecs (simdjson via PulseJSON); the small control messages
/// use them too where they exist.
enum PayloadCoding {
    static func decodeConnect(_ payload: [UInt8]) throws -> ConnectRequest {
        try JSONDecoder().decode(ConnectRequest.self, from: Data(payload))
    }

    static func decodeHeartbeat(_ payload: [UInt8]) throws -> HeartbeatRequest {
        try JSONDecoder().decode(HeartbeatRequest.self, from: Data(payload))
    }

    static func decodeConfigPull(_ payload: [UInt8]) throws -> ConfigPullRequest {
        try JSONDecoder().decode(ConfigPullRequest.self, from: Data(payload))
    }

    static func decodeUpdateCheck(_ payload: [UInt8]) throws -> UpdateCheckRequest {
        try JSONDecoder().decode(UpdateCheckRequest.self, from: Data(payload))
    }

    /// The route of a control RPC request (validated syntax).
    static func decodeControlRoute(_ payload: [UInt8]) throws -> String {
        let document = try JSONParser().parse(payload)
        guard let route = document.root["route"]?.string else {
            throw PulseProtocolError(code: .missingField, message: "$.route is missing or not a string")
        }
        return try ControlRoute(validating: route).name
    }

    static func decodeEventBatch(_ payload: [UInt8], connectionId: String) throws -> BatchRecord<EventRecord> {
        let root = try JSONParser().parse(payload).root
        let (identity, batchId) = try batchEnvelope(root)
        guard let events = root["events"], events.kind == .array else {
            throw PulseProtocolError(code: .missingField, message: "$.events is missing or not an array")
        }
        guard events.count > 0 else {
            throw PulseProtocolError(code: .invalidValue, message: "$.events is empty")
        }
        var records: [EventRecord] = []
        records.reserveCapacity(events.count)
        var writer = JSONWriter(capacity: 512)
        for (index, event) in events.elements.enumerated() {
            let path = "$.events[\(index)]"
            let kind = try requiredString(event, "kind", path)
            _ = try PulseEventKind(wireValue: kind)
            let id = try requiredString(event, "id", path)
            let timestamp = try requiredInt(event, "timestamp", path)
            let sessionId = try requiredString(event, "sessionId", path)
            let name = try requiredString(event, "name", path)
            let source = event["source"]
            let attributes = event["attributes"]
            if let attributes, !attributes.isNull, attributes.kind != .object {
                throw PulseProtocolError(code: .typeMismatch, message: "\(path).attributes is not an object")
            }
            writer.reset()
            writer.beginObject()
            writer.field("id", id)
            writer.field("timestamp", timestamp)
            writer.field("sessionId", sessionId)
            writer.field("kind", kind)
            writer.field("name", name)
            writer.key("source")
            writer.beginObject()
            writer.field("module", source?["module"]?.string)
            writer.field("imageUuid", source?["imageUuid"]?.string)
            writer.endObject()
            writer.key("attributes")
            if let attributes, attributes.kind == .object {
                writer.value(attributes.value)
            } else {
                writer.beginObject()
                writer.endObject()
            }
            writer.endObject()
            let crashId = kind == "Crash" ? attributes?["app.crash.id"]?.string : nil
            records.append(
                EventRecord(
                    id: id, timestampMs: timestamp, sessionId: sessionId, kind: kind, name: name, crashId: crashId,
                    json: String(decoding: writer.bytes, as: UTF8.self)))
        }
        return BatchRecord(batchId: batchId, connectionId: connectionId, identity: identity, items: records)
    }

    static func decodeCrashBatch(_ payload: [UInt8], connectionId: String) throws -> BatchRecord<CrashRecord> {
        let root = try JSONParser().parse(payload).root
        let (identity, batchId) = try batchEnvelope(root)
        guard let crashes = root["crashes"], crashes.kind == .array else {
            throw PulseProtocolError(code: .missingField, message: "$.crashes is missing or not an array")
        }
        guard crashes.count > 0 else {
            throw PulseProtocolError(code: .invalidValue, message: "$.crashes is empty")
        }
        var records: [CrashRecord] = []
        for (index, crash) in crashes.elements.enumerated() {
            let path = "$.crashes[\(index)]"
            let crashId = try requiredString(crash, "crashId", path)
            let timestamp = try requiredInt(crash, "timestamp", path)
            guard let build = crash["build"], build.kind == .object else {
                throw PulseProtocolError(code: .missingField, message: "\(path).build is missing")
            }
            records.append(
                CrashRecord(
                    crashId: crashId, timestampMs: timestamp, sessionId: crash["sessionId"]?.string,
                    json: String(decoding: crash.value.encoded(), as: UTF8.self)))
        }
        return BatchRecord(batchId: batchId, connectionId: connectionId, identity: identity, items: records)
    }

    private static func batchEnvelope(_ root: JSONNode) throws -> (StoredIdentity, String) {
        guard root.kind == .object else {
            throw PulseProtocolError(code: .typeMismatch, message: "$ is not an object")
        }
        guard let identity = root["identity"], identity.kind == .object else {
            throw PulseProtocolError(code: .missingField, message: "$.identity is missing")
        }
        let path = "$.identity"
        let stored = StoredIdentity(
            appId: try requiredString(identity, "projectId", path),
            installationId: try requiredString(identity, "installationId", path),
            deviceId: try requiredString(identity, "deviceId", path), userId: identity["userId"]?.string,
            appVersion: identity["appVersion"]?.string, buildNumber: identity["buildNumber"]?.int64 ?? 0,
            sdkVersion: try requiredString(identity, "sdkVersion", path),
            platform: try requiredString(identity, "platform", path), packageName: identity["packageName"]?.string)
        return (stored, try requiredString(root, "batchId", "$"))
    }

    private static func requiredString(_ node: JSONNode, _ key: String, _ path: String) throws -> String {
        guard let value = node[key]?.string else {
            throw PulseProtocolError(code: .missingField, message: "\(path).\(key) is missing or not a string")
        }
        return value
    }

    private static func requiredInt(_ node: JSONNode, _ key: String, _ path: String) throws -> Int64 {
        guard let value = node[key]?.int64 else {
            throw PulseProtocolError(code: .missingField, message: "\(path).\(key) is missing or not an integer")
        }
        return value
    }

    // MARK: - Result data in canonical key order

    static func encode(_ result: ConnectResult) -> [UInt8] {
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        writer.field("connected", result.connected)
        writer.field("protocolVersion", result.protocolVersion)
        writer.field("connectionId", result.connectionId)
        writer.field("serverTimeMs", result.serverTimeMs)
        writer.field("configRevision", result.configRevision)
        writer.field("heartbeatIntervalMs", result.heartbeatIntervalMs)
        writeKinds(result.collectKinds, into: &writer)
        writer.endObject()
        return writer.bytes
    }

    static func encode(_ result: HeartbeatResult) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.field("accepted", result.accepted)
        writer.field("serverTimeMs", result.serverTimeMs)
        writer.field("configRevision", result.configRevision)
        writer.field("heartbeatIntervalMs", result.heartbeatIntervalMs)
        writeKinds(result.collectKinds, into: &writer)
        writer.endObject()
        return writer.bytes
    }

    static func encode(_ result: UpdateCheckResult) -> [UInt8] {
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        writer.field("action", result.action.rawValue)
        writer.field("latestVersionName", result.latestVersionName)
        writer.field("latestBuildNumber", result.latestBuildNumber)
        writer.field("releaseNotes", result.releaseNotes)
        writer.field("downloadUrl", result.downloadUrl)
        writer.endObject()
        return writer.bytes
    }

    static func encode(_ snapshot: ConfigSnapshot) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.field("revision", snapshot.revision)
        writer.field("killSwitch", snapshot.killSwitch)
        writer.field("maxBatchAgeMs", snapshot.maxBatchAgeMs)
        writer.field("queueByteCap", snapshot.queueByteCap)
        writer.field("sealIntervalMs", snapshot.sealIntervalMs)
        writer.field("batchMaxEvents", snapshot.batchMaxEvents)
        writer.field("batchMaxBytes", snapshot.batchMaxBytes)
        writer.field("compression", snapshot.compression.rawValue)
        writer.field("compressionMinBytes", snapshot.compressionMinBytes)
        writer.key("sampling")
        writer.beginObject()
        for kind in PulseEventKind.allCases {
            if let rate = snapshot.sampling[kind] {
                writer.field(kind.rawValue, rate)
            }
        }
        writer.endObject()
        writer.field("diagnosticsLevel", snapshot.diagnosticsLevel.rawValue)
        writeKinds(snapshot.collectKinds, into: &writer)
        writer.key("requiredCapabilities")
        writer.beginArray()
        for capability in snapshot.requiredCapabilities {
            writer.string(capability)
        }
        writer.endArray()
        writer.key("endpoints")
        writer.beginArray()
        for endpoint in snapshot.endpoints {
            writer.beginObject()
            writer.field("name", endpoint.name)
            writer.field("url", endpoint.url)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    private static func writeKinds(_ kinds: [PulseEventKind], into writer: inout JSONWriter) {
        writer.key("collectKinds")
        writer.beginArray()
        for kind in kinds {
            writer.string(kind.rawValue)
        }
        writer.endArray()
    }

    /// A short, payload-free description of a decoding error for a 400 message.
    static func summary(of error: any Error) -> String {
        if let error = error as? PulseProtocolError {
            return error.message
        }
        if let error = error as? PulseJSONError {
            return "not valid JSON (\(error.code.rawValue))"
        }
        if error is DecodingError {
            return "a field is missing or has the wrong type"
        }
        return "cannot be decoded"
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
