// trace.proto and trace_service.proto (opentelemetry-proto v1).

extension MessageSchema {
    /// `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`.
    static let exportTraceServiceRequest = MessageSchema(
        "ExportTraceServiceRequest", [FieldSchema(1, "resourceSpans", .message(.resourceSpans), .repeated)])

    /// `opentelemetry.proto.trace.v1.ResourceSpans`.
    static let resourceSpans = MessageSchema(
        "ResourceSpans",
        [
            FieldSchema(1, "resource", .message(.resource), .explicit),
            FieldSchema(2, "scopeSpans", .message(.scopeSpans), .repeated),
            FieldSchema(3, "schemaUrl", .string),
        ])

    /// `opentelemetry.proto.trace.v1.ScopeSpans`.
    static let scopeSpans = MessageSchema(
        "ScopeSpans",
        [
            FieldSchema(1, "scope", .message(.instrumentationScope), .explicit),
            FieldSchema(2, "spans", .message(.span), .repeated),
            FieldSchema(3, "schemaUrl", .string),
        ])

    /// `opentelemetry.proto.trace.v1.Span`.
    static let span = MessageSchema(
        "Span",
        [
            FieldSchema(1, "traceId", .bytesHex(16)),
            FieldSchema(2, "spanId", .bytesHex(8)),
            FieldSchema(3, "traceState", .string),
            FieldSchema(4, "parentSpanId", .bytesHex(8)),
            FieldSchema(5, "name", .string),
            FieldSchema(6, "kind", .enumeration(.spanKind)),
            FieldSchema(7, "startTimeUnixNano", .fixed64),
            FieldSchema(8, "endTimeUnixNano", .fixed64),
            FieldSchema(9, "attributes", .message(.keyValue), .repeated),
            FieldSchema(10, "droppedAttributesCount", .uint32),
            FieldSchema(11, "events", .message(.spanEvent), .repeated),
            FieldSchema(12, "droppedEventsCount", .uint32),
            FieldSchema(13, "links", .message(.spanLink), .repeated),
            FieldSchema(14, "droppedLinksCount", .uint32),
            FieldSchema(15, "status", .message(.status), .explicit),
            FieldSchema(16, "flags", .fixed32),
        ])

    /// `opentelemetry.proto.trace.v1.Span.Event`.
    static let spanEvent = MessageSchema(
        "Span.Event",
        [
            FieldSchema(1, "timeUnixNano", .fixed64),
            FieldSchema(2, "name", .string),
            FieldSchema(3, "attributes", .message(.keyValue), .repeated),
            FieldSchema(4, "droppedAttributesCount", .uint32),
        ])

    /// `opentelemetry.proto.trace.v1.Span.Link`.
    static let spanLink = MessageSchema(
        "Span.Link",
        [
            FieldSchema(1, "traceId", .bytesHex(16)),
            FieldSchema(2, "spanId", .bytesHex(8)),
            FieldSchema(3, "traceState", .string),
            FieldSchema(4, "attributes", .message(.keyValue), .repeated),
            FieldSchema(5, "droppedAttributesCount", .uint32),
            FieldSchema(6, "flags", .fixed32),
        ])

    /// `opentelemetry.proto.trace.v1.Status` (field 1 is reserved).
    static let status = MessageSchema(
        "Status",
        [
            FieldSchema(2, "message", .string),
            FieldSchema(3, "code", .enumeration(.statusCode)),
        ])
}
