import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseProtocol

/// Log records to Pulse events and crash reports.
extension ResourceMapper {
    mutating func mapLogRecord(
        _ record: JSONNode, at place: RecordPlace, into collected: inout CollectedRecords
    ) throws(MappingProblem) {
        let scan = try beginAttributes(record["attributes"])
        if let body = record["body"], !body.isNull, body.count > 0 {
            attributes.key("log.body")
            try AnyValue.write(body, into: &attributes)
        }
        let severity = AnyValue.enumValue(record["severityNumber"], names: OTLPEnum.severityNumber.names) ?? 0
        if severity > 0 {
            attributes.key("log.severity_number")
            attributes.int(severity)
        }
        if let text = record["severityText"]?.string, !text.isEmpty {
            attributes.key("log.severity_text")
            attributes.string(text)
        }
        if let trace = record["traceId"]?.string, !trace.isEmpty {
            attributes.key("trace_id")
            attributes.string(trace.lowercased())
        }
        if let span = record["spanId"]?.string, !span.isEmpty {
            attributes.key("span_id")
            attributes.string(span.lowercased())
        }
        attributes.key("otlp.signal")
        attributes.string("logs")
        let time = timestamp(
            deviceTime: AnyValue.nanosToMillis(record["timeUnixNano"])
                ?? AnyValue.nanosToMillis(record["observedTimeUnixNano"]))
        attributes.endObject()

        let recordEventName = record["eventName"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        // The diagnostics record: its eventName, or (without one) an event.name attribute.
        if recordEventName.map({ $0 == DiagnosticsObservation.recordName }) ?? scan.namesDiagnosticsRecord {
            diagnostics.named(record["attributes"], resource: place.resource)
        }
        let eventName = scan.eventName.flatMap { $0.isEmpty ? nil : $0 } ?? recordEventName
        let kind: PulseEventKind
        if let override = try self.kind(override: scan.kindOverride, resourceIndex: place.position.0) {
            kind = override
        } else if scan.crashID != nil || eventName == "device.crash" {
            kind = .crash
        } else if let eventName, eventName.hasPrefix("breadcrumb.") {
            kind = .breadcrumb
        } else if eventName == "pulsegate.diagnostics" {
            kind = .runtime
        } else if eventName != nil {
            kind = .analytics
        } else if severity >= 17 || scan.exceptionType != nil {
            kind = .error
        } else {
            kind = .log
        }
        let sessionID = scan.sessionID ?? place.identity.sessionID ?? ""
        let imageUUID = scan.buildID ?? place.identity.buildID
        if let crashID = scan.crashID, !crashID.isEmpty {
            let id = "crash-" + SHA256.hexDigest(Array(crashID.utf8))
            collected.crashFallbacks.append(
                encodeEvent(
                    id: id, timestamp: time, sessionID: sessionID, kind: .crash, name: eventName ?? "crash",
                    module: place.module, imageUUID: imageUUID))
            collected.crashes.append(
                encodeCrash(
                    crashID: crashID, timestamp: time, sessionID: scan.sessionID ?? place.identity.sessionID,
                    scan: scan,
                    body: record["body"], identity: place.identity))
            return
        }
        let id: String
        if let uid = scan.logRecordUID, !uid.isEmpty {
            id = Self.fitted(uid)
        } else {
            id = derivedID(place.position)
        }
        let name = eventName ?? (kind == .crash ? "crash" : "log")
        collected.events.append(
            encodeEvent(
                id: id, timestamp: time, sessionID: sessionID, kind: kind, name: name, module: place.module,
                imageUUID: imageUUID))
    }
}
