import PulseJSON
import PulseProtocol

// The PulseJSON side of the benchmark: extract every field of the sample documents into the
// mirror structs (as the gateway would), and encode the batch back with JSONWriter.

enum FastPaths {
    struct Invalid: Error {}

    // MARK: Decoding

    /// Visits every node of a document without building a model: the counterpart of
    /// JSONSerialization, which returns an untyped tree. Reads every scalar and the bytes of
    /// every string (keys included; length, first and last byte) into a checksum.
    static func visitAll(_ node: JSONNode) -> Int {
        switch node.kind {
        case .null: return 1
        case .bool: return node.bool! ? 3 : 2
        case .int, .uint: return Int(truncatingIfNeeded: node.uint64 ?? UInt64(bitPattern: node.int64 ?? 0))
        case .double: return Int(truncatingIfNeeded: node.double!.bitPattern)
        case .string:
            return node.withUTF8 { bytes in bytes.count &+ Int(bytes.first ?? 0) &+ Int(bytes.last ?? 0) } ?? 0
        case .array:
            var sum = 0
            for element in node.elements { sum &+= visitAll(element) }
            return sum
        case .object:
            var sum = 0
            for (key, value) in node.memberNodes { sum &+= visitAll(key) &+ visitAll(value) }
            return sum
        }
    }

    /// `nil` for a missing or null member, else the value `read` finds (`nil` from it: the wrong type).
    @inline(__always)
    static func optional<Value>(_ node: JSONNode?, _ read: (JSONNode) -> Value?) throws(Invalid) -> Value? {
        guard let node, !node.isNull else { return nil }
        guard let value = read(node) else { throw Invalid() }
        return value
    }

    static func optionalString(_ node: JSONNode?) throws(Invalid) -> String? { try optional(node) { $0.string } }

    static func requiredString(_ node: JSONNode?) throws(Invalid) -> String {
        guard let value = node?.string else { throw Invalid() }
        return value
    }

    static func optionalInt64(_ node: JSONNode?) throws(Invalid) -> Int64? { try optional(node) { $0.int64 } }

    /// An OTLP `AnyValue` is a oneof: dispatch on its (single) member instead of probing each key.
    static func otlpAnyValue(_ node: JSONNode?) throws(Invalid) -> OTLPAnyValue {
        guard let node, node.kind == .object else { throw Invalid() }
        var value = OTLPAnyValue()
        for (key, member) in node.memberNodes {
            if key.stringEquals("stringValue") {
                value.stringValue = try optionalString(member)
            } else if key.stringEquals("intValue") {
                value.intValue = try optionalString(member)
            } else if key.stringEquals("doubleValue") {
                value.doubleValue = member.double
            } else if key.stringEquals("boolValue") {
                value.boolValue = member.bool
            }
        }
        return value
    }

    static func otlpAttributes(_ node: JSONNode?) throws(Invalid) -> [OTLPKeyValue] {
        guard let node else { return [] }
        var attributes: [OTLPKeyValue] = []
        attributes.reserveCapacity(node.count)
        for element in node.elements {
            attributes.append(
                OTLPKeyValue(key: try requiredString(element["key"]), value: try otlpAnyValue(element["value"])))
        }
        return attributes
    }

    static func otlpLogs(_ root: JSONNode) throws(Invalid) -> OTLPExportLogsRequest {
        guard let resourceLogs = root["resourceLogs"] else { throw Invalid() }
        var request = OTLPExportLogsRequest(resourceLogs: [])
        for resourceNode in resourceLogs.elements {
            var resource: OTLPResource?
            if let node = resourceNode["resource"] {
                resource = OTLPResource(
                    attributes: try otlpAttributes(node["attributes"]),
                    droppedAttributesCount: try optionalInt64(node["droppedAttributesCount"]))
            }
            var scopes: [OTLPScopeLogs] = []
            guard let scopeNodes = resourceNode["scopeLogs"] else { throw Invalid() }
            for scopeNode in scopeNodes.elements {
                var scope: OTLPScope?
                if let node = scopeNode["scope"] {
                    scope = OTLPScope(
                        name: try optionalString(node["name"]), version: try optionalString(node["version"]))
                }
                var records: [OTLPLogRecord] = []
                if let recordNodes = scopeNode["logRecords"] {
                    records.reserveCapacity(recordNodes.count)
                    for node in recordNodes.elements {
                        records.append(
                            OTLPLogRecord(
                                timeUnixNano: try optionalString(node["timeUnixNano"]),
                                observedTimeUnixNano: try optionalString(node["observedTimeUnixNano"]),
                                severityNumber: try optionalInt64(node["severityNumber"]).map { Int($0) },
                                severityText: try optionalString(node["severityText"]),
                                body: try node["body"].map { (body) throws(Invalid) in try otlpAnyValue(body) },
                                attributes: try otlpAttributes(node["attributes"]),
                                droppedAttributesCount: try optionalInt64(node["droppedAttributesCount"]),
                                flags: try optionalInt64(node["flags"]),
                                traceId: try optionalString(node["traceId"]),
                                spanId: try optionalString(node["spanId"])))
                    }
                }
                scopes.append(
                    OTLPScopeLogs(
                        scope: scope, logRecords: records, schemaUrl: try optionalString(scopeNode["schemaUrl"])))
            }
            request.resourceLogs.append(
                OTLPResourceLogs(
                    resource: resource, scopeLogs: scopes, schemaUrl: try optionalString(resourceNode["schemaUrl"])))
        }
        return request
    }

    static func eventKind(_ node: JSONNode?) throws(Invalid) -> PulseEventKind {
        guard let node else { throw Invalid() }
        for kind in PulseEventKind.allCases where node.stringEquals(kind.rawValue) { return kind }
        throw Invalid()
    }

    static func pulseBatch(_ root: JSONNode) throws(Invalid) -> GatewayBatch {
        guard let identityNode = root["identity"], let eventNodes = root["events"] else { throw Invalid() }
        guard let buildNumber = identityNode["buildNumber"]?.int64 else { throw Invalid() }
        let identity = PulseIdentity(
            projectId: try requiredString(identityNode["projectId"]),
            installationId: try requiredString(identityNode["installationId"]),
            deviceId: try requiredString(identityNode["deviceId"]),
            userId: try optionalString(identityNode["userId"]),
            appVersion: try optionalString(identityNode["appVersion"]),
            buildNumber: buildNumber,
            sdkVersion: try requiredString(identityNode["sdkVersion"]),
            platform: try requiredString(identityNode["platform"]),
            packageName: try optionalString(identityNode["packageName"]))
        var events: [GatewayEvent] = []
        events.reserveCapacity(eventNodes.count)
        for node in eventNodes.elements {
            guard let timestamp = node["timestamp"]?.int64, let sourceNode = node["source"],
                let attributesNode = node["attributes"], case .object(let attributes) = attributesNode.value
            else { throw Invalid() }
            events.append(
                GatewayEvent(
                    id: try requiredString(node["id"]),
                    timestamp: timestamp,
                    sessionId: try requiredString(node["sessionId"]),
                    kind: try eventKind(node["kind"]),
                    name: try requiredString(node["name"]),
                    source: PulseSource(
                        module: try optionalString(sourceNode["module"]),
                        imageUuid: try optionalString(sourceNode["imageUuid"])),
                    attributes: attributes))
        }
        return GatewayBatch(identity: identity, events: events, batchId: try requiredString(root["batchId"]))
    }

    // MARK: Encoding

    static func write(_ value: AnyJSON, to w: inout JSONWriter) {
        switch value {
        case .null: w.null()
        case .bool(let b): w.bool(b)
        case .int(let i): w.int(i)
        case .double(let d): w.double(d)
        case .string(let s): w.string(s)
        case .array(let elements):
            w.beginArray()
            for element in elements { write(element, to: &w) }
            w.endArray()
        case .object(let members):
            w.beginObject()
            for (key, member) in members {
                w.key(key)
                write(member, to: &w)
            }
            w.endObject()
        }
    }

    static func encode(_ batch: PulseBatch) -> [UInt8] {
        var w = JSONWriter(capacity: 48 << 10)
        w.beginObject()
        w.key("identity")
        w.beginObject()
        let identity = batch.identity
        w.field("projectId", identity.projectId)
        w.field("installationId", identity.installationId)
        w.field("deviceId", identity.deviceId)
        w.field("userId", identity.userId)
        w.field("appVersion", identity.appVersion)
        w.field("buildNumber", identity.buildNumber)
        w.field("sdkVersion", identity.sdkVersion)
        w.field("platform", identity.platform)
        w.field("packageName", identity.packageName)
        w.endObject()
        w.key("events")
        w.beginArray()
        for event in batch.events {
            w.beginObject()
            w.field("id", event.id)
            w.field("timestamp", event.timestamp)
            w.field("sessionId", event.sessionId)
            w.field("kind", event.kind.rawValue)
            w.field("name", event.name)
            w.key("source")
            w.beginObject()
            w.field("module", event.source.module)
            w.field("imageUuid", event.source.imageUuid)
            w.endObject()
            w.key("attributes")
            write(.object(event.attributes), to: &w)
            w.endObject()
        }
        w.endArray()
        w.field("batchId", batch.batchId)
        w.endObject()
        return w.bytes
    }
}
