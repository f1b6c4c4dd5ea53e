import OTLPProtobuf
import PulseJSON
import PulseProtocol

/// Spans to Pulse events.
extension ResourceMapper {
    /// Maps `span`, of a resource whose identity is `identity`.
    mutating func mapSpan(
        _ span: JSONCursor, of identity: ResolvedIdentity, at place: RecordPlace,
        into collected: inout CollectedRecords
    ) throws(MappingProblem) {
        let scan = try beginAttributes(span["attributes"])
        let traceID = span["traceId"]?.string?.lowercased() ?? ""
        let spanID = span["spanId"]?.string?.lowercased() ?? ""
        if !traceID.isEmpty {
            attributes.key(verbatim: "trace_id")
            attributes.string(traceID)
        }
        if !spanID.isEmpty {
            attributes.key(verbatim: "span_id")
            attributes.string(spanID)
        }
        if let parent = span["parentSpanId"]?.string, !parent.isEmpty {
            attributes.key(verbatim: "span.parent_span_id")
            attributes.string(parent.lowercased())
        }
        // Zero is the proto3 default (unspecified / unset): an explicit `"kind":0` or
        // `"status":{"code":0}` maps like an omitted one, as it must for protobuf, where a default
        // value is never on the wire.
        let spanKind = Self.spanKind(span["kind"])
        if let spanKind, spanKind != 0 {
            attributes.key(verbatim: "span.kind")
            attributes.int(spanKind)
        }
        if var end = AnyValue.nanosToMillis(span["endTimeUnixNano"]) {
            if let clockOffset { end += clockOffset }
            attributes.key(verbatim: "span.end_time_ms")
            attributes.int(end)
        }
        if let code = AnyValue.enumValue(span["status"]?["code"], of: .statusCode),
            code != 0
        {
            attributes.key(verbatim: "span.status_code")
            attributes.int(code)
        }
        attributes.key(verbatim: "otlp.signal")
        attributes.string("traces")
        let time = timestamp(deviceTime: AnyValue.nanosToMillis(span["startTimeUnixNano"]))
        attributes.endObject()

        let kind: PulseEventKind
        if let override = try self.kind(override: scan.kindOverride, resourceIndex: place.position.0) {
            kind = override
        } else if scan.networkMarker || spanKind == 3 {
            kind = .network
        } else {
            kind = .performance
        }
        let id: String
        if Self.isHexID(traceID, length: 32), Self.isHexID(spanID, length: 16) {
            id = traceID + spanID
        } else {
            id = derivedID(place.position)
        }
        let spanName = span["name"]?.string
        if spanName == DiagnosticsObservation.recordName {
            diagnostics.named(span["attributes"], resource: place.resource, of: document)
        }
        let name = spanName.flatMap { $0.isEmpty ? nil : $0 } ?? "span"
        encodeEvent(
            id: id, timestamp: time, sessionID: scan.sessionID ?? identity.sessionID ?? "", kind: kind, name: name,
            module: place.module, imageUUID: scan.buildID ?? identity.buildID, into: &collected.events)
    }

    /// OTLP span kind: the enum as an integer (or its name, which some encoders write).
    static func spanKind(_ node: JSONCursor?) -> Int64? {
        guard let node else { return nil }
        if let number = node.int64 { return number }
        switch node.string {
        case "SPAN_KIND_UNSPECIFIED": return 0
        case "SPAN_KIND_INTERNAL": return 1
        case "SPAN_KIND_SERVER": return 2
        case "SPAN_KIND_CLIENT": return 3
        case "SPAN_KIND_PRODUCER": return 4
        case "SPAN_KIND_CONSUMER": return 5
        default: return nil
        }
    }

    static func isHexID(_ text: String, length: Int) -> Bool {
        guard text.utf8.count == length else { return false }
        var nonZero = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0"): continue
            case UInt8(ascii: "1")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): nonZero = true
            default: return false
            }
        }
        return nonZero
    }
}
