import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseProtocol

/// Log records to Pulse events and crash reports.
extension ResourceMapper {
    /// The indices of the `LogRecord` fields the mapping reads (``MessageFields``).
    struct LogRecordFields {
        let attributes, body, severityNumber, severityText, traceID, spanID, time, observedTime, eventName: Int

        static let indices = LogRecordFields(OTLPValidator.schemas[MessageKind.logRecord.rawValue])

        private init(_ schema: OTLPValidator.Schema) {
            attributes = schema.field(named: "attributes")
            body = schema.field(named: "body")
            severityNumber = schema.field(named: "severityNumber")
            severityText = schema.field(named: "severityText")
            traceID = schema.field(named: "traceId")
            spanID = schema.field(named: "spanId")
            time = schema.field(named: "timeUnixNano")
            observedTime = schema.field(named: "observedTimeUnixNano")
            eventName = schema.field(named: "eventName")
            // The walk checks these as it reads them (``MappingWalk/folded``), with the reads below.
            guard case .uint64 = schema.forms[time].value,
                case .enumeration(.severityNumber) = schema.forms[severityNumber].value
            else { preconditionFailure("the log record's time is a uint64 and its severity a SeverityNumber") }
        }
    }

    /// Whether the event name `name` is `constant`, their lengths compared first: most names differ
    /// in length from the few the rules look for, and are told apart without a comparison call.
    @inline(__always)
    static func name(_ name: String?, is constant: String) -> Bool {
        guard let name, name.utf8.count == constant.utf8.count else { return false }
        return name == constant
    }

    /// Maps the log record whose members by field are `record` (``MappingWalk/fields(of:_:)``), of
    /// a resource whose identity is `identity`.
    mutating func mapLogRecord(
        _ record: MessageFields, of identity: ResolvedIdentity, at place: RecordPlace,
        into collected: inout CollectedRecords
    ) throws(MappingProblem) {
        let field = LogRecordFields.indices
        let scan = try beginAttributes(record[field.attributes])
        if let body = record[field.body], !body.isNull, body.count > 0 {
            attributes.key(verbatim: "log.body")
            try AnyValue.write(body, into: &attributes)
        }
        let severity =
            try MappingWalk.read(record[field.severityNumber], field: field.severityNumber, of: .logRecord) {
                OTLPValidator.enumValue($0, of: .severityNumber)
            } ?? 0
        if severity > 0 {
            attributes.key(verbatim: "log.severity_number")
            attributes.int(severity)
        }
        if let text = record[field.severityText], text.withUTF8({ !$0.isEmpty }) == true {
            attributes.key(verbatim: "log.severity_text")
            _ = text.withUTF8 { attributes.string(utf8: $0) }
        }
        writeLowercasedID("trace_id", record[field.traceID])
        writeLowercasedID("span_id", record[field.spanID])
        attributes.key(verbatim: "otlp.signal")
        attributes.string("logs")
        let nanos = try MappingWalk.read(record[field.time], field: field.time, of: .logRecord) {
            OTLPValidator.unsignedInteger($0)
        }
        let time = timestamp(
            deviceTime: nanos.flatMap(AnyValue.millis(nanos:)) ?? AnyValue.nanosToMillis(record[field.observedTime]))
        attributes.endObject()

        let recordEventName = record[field.eventName]?.string.flatMap { $0.isEmpty ? nil : $0 }
        // The diagnostics record: its eventName, or (without one) an event.name attribute.
        if recordEventName.map({ Self.name($0, is: DiagnosticsObservation.recordName) }) ?? scan.namesDiagnosticsRecord
        {
            diagnostics.named(record[field.attributes], resource: place.resource, of: document)
        }
        let eventName = scan.eventName.flatMap { $0.isEmpty ? nil : $0 } ?? recordEventName
        let kind: PulseEventKind
        if let override = try self.kind(override: scan.kindOverride, resourceIndex: place.position.0) {
            kind = override
        } else if scan.crashID != nil || Self.name(eventName, is: "device.crash") {
            kind = .crash
        } else if let eventName, eventName.hasPrefix("breadcrumb.") {
            kind = .breadcrumb
        } else if Self.name(eventName, is: "pulsegate.diagnostics") {
            kind = .runtime
        } else if eventName != nil {
            kind = .analytics
        } else if severity >= 17 || scan.exceptionType != nil {
            kind = .error
        } else {
            kind = .log
        }
        let sessionID = scan.sessionID ?? identity.sessionID ?? ""
        let imageUUID = scan.buildID ?? identity.buildID
        if let crashID = scan.crashID, !crashID.isEmpty {
            let id = "crash-" + SHA256.hexDigest(Array(crashID.utf8))
            encodeEvent(
                id: id, timestamp: time, sessionID: sessionID, kind: .crash, name: eventName ?? "crash",
                module: place.module, imageUUID: imageUUID, into: &collected.crashFallbacks)
            encodeCrash(
                crashID: crashID, timestamp: time, sessionID: scan.sessionID ?? identity.sessionID, scan: scan,
                body: record[field.body], identity: identity, into: &collected.crashes)
            return
        }
        let id: String
        if let uid = scan.logRecordUID, !uid.isEmpty {
            id = Self.fitted(uid)
        } else {
            id = derivedID(place.position)
        }
        let name = eventName ?? (kind == .crash ? "crash" : "log")
        encodeEvent(
            id: id, timestamp: time, sessionID: sessionID, kind: kind, name: name, module: place.module,
            imageUUID: imageUUID, into: &collected.events)
    }
}
