import OTLPProtobuf
import PulseJSON
import PulseProtocol

/// The diagnostics record attached to every batch sealed at ``DiagnosticsLevel/batchSummaries`` or above.
///
/// It is an ordinary OTLP item of the batch's signal, so it passes through any OTLP receiver: a log record
/// (`eventName` and `event.name` = `pulsegate.diagnostics`) in logs batches, a zero-length INTERNAL span named
/// `pulsegate.diagnostics` in traces batches, and a gauge `pulsegate.diagnostics` (one point, value = the
/// batch's sequence number) in metrics batches. All three carry the same attributes (`docs/diagnostics.md`),
/// including `apsio.event.kind` = `Runtime`, so the gateway forwards them upstream as Runtime events.
enum DiagnosticsRecord {
    /// The event, span and metric name of the record.
    static let eventName = "pulsegate.diagnostics"
    /// The version of the attribute set.
    static let version: Int64 = 1

    /// The fields of one record.
    struct Content {
        var level: DiagnosticsLevel
        var sequence: Int64
        var snapshot: DiagnosticsSnapshot
        var deviceId: String
        var installationId: String
        var appVersion: String?
        var timeNanos: Int64
    }

    /// The record's attributes, sorted by key.
    static func attributes(_ content: Content) -> [(String, AttributeValue)] {
        let prefix = "pulsegate.diagnostics."
        let snapshot = content.snapshot
        var all: [String: AttributeValue] = [
            "event.name": .string(eventName),
            "apsio.event.kind": .string("Runtime"),
            "pulsegate.batch.sequence": .int(content.sequence),
            prefix + "version": .int(version),
            prefix + "level": .string(content.level.rawValue),
            prefix + "session_started_ms": .int(snapshot.sessionStartedMilliseconds),
            prefix + "device_id": .string(content.deviceId),
            prefix + "installation_id": .string(content.installationId),
            prefix + "library_version": .string(ResourceIdentity.sdkName + "/" + ResourceIdentity.sdkVersion),
            prefix + "batches_attempted": .int(snapshot.batchesAttempted),
            prefix + "batches_sent_ok": .int(snapshot.batchesSentSuccessfully),
            prefix + "batches_with_errors": .int(snapshot.batchesWithErrors),
            prefix + "errors_total": .int(snapshot.totalErrors),
            prefix + "error_history": .array(
                snapshot.errorHistory.map { entry in
                    .map([
                        "code": .int(Int64(entry.code)), "domain": .string(entry.domain),
                        "description": .string(entry.description), "batch_number": .int(entry.batchNumber),
                    ])
                }),
        ]
        if let appVersion = content.appVersion {
            all[prefix + "app_version"] = .string(appVersion)
        }
        for reason in DropReason.allCases {
            all[prefix + "drops." + dropName(reason)] = .int(snapshot.droppedRecords[reason] ?? 0)
        }
        return all.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The snake-case attribute suffix of a drop reason.
    static func dropName(_ reason: DropReason) -> String {
        switch reason {
        case .cap: "cap"
        case .age: "age"
        case .consent: "consent"
        case .killSwitch: "kill_switch"
        case .oversized: "oversized"
        case .rejected: "rejected"
        case .partiallyRejected: "partially_rejected"
        }
    }

    /// The record as an OTLP JSON item of `signal`.
    static func fragment(_ content: Content, signal: Signal, random: RandomSource) -> [UInt8] {
        var attributes = attributes(content)
        let time = String(content.timeNanos)
        var writer = JSONWriter(capacity: 2_048)
        writer.beginObject()
        switch signal {
        case .logs:
            attributes.append(
                (
                    RecordEncoder.recordUIDKey,
                    .string(ULIDGenerator.make(milliseconds: content.timeNanos / 1_000_000, random: random))
                ))
            attributes.sort { $0.0 < $1.0 }
            writer.field("timeUnixNano", time)
            writer.field("observedTimeUnixNano", time)
            writer.field("severityNumber", 9)
            writer.field("severityText", "INFO")
            writer.field("eventName", eventName)
            writer.key("attributes")
            OTLPJSON.writeAttributes(attributes, to: &writer)
        case .traces:
            writer.field("traceId", random.hex(byteCount: 16))
            writer.field("spanId", random.hex(byteCount: 8))
            writer.field("name", eventName)
            writer.field("kind", 1)
            writer.field("startTimeUnixNano", time)
            writer.field("endTimeUnixNano", time)
            writer.key("attributes")
            OTLPJSON.writeAttributes(attributes, to: &writer)
        case .metrics:
            writer.field("name", eventName)
            writer.key("gauge")
            writer.beginObject()
            writer.key("dataPoints")
            writer.beginArray()
            writer.beginObject()
            writer.field("startTimeUnixNano", time)
            writer.field("timeUnixNano", time)
            writer.field("asInt", String(content.sequence))
            writer.key("attributes")
            OTLPJSON.writeAttributes(attributes, to: &writer)
            writer.endObject()
            writer.endArray()
            writer.endObject()
        }
        writer.endObject()
        return writer.bytes
    }
}
