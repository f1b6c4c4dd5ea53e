// logs.proto and logs_service.proto (opentelemetry-proto v1).

extension MessageSchema {
    /// `opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest`.
    static let exportLogsServiceRequest = MessageSchema(
        "ExportLogsServiceRequest", [FieldSchema(1, "resourceLogs", .message(.resourceLogs), .repeated)])

    /// `opentelemetry.proto.logs.v1.ResourceLogs`.
    static let resourceLogs = MessageSchema(
        "ResourceLogs",
        [
            FieldSchema(1, "resource", .message(.resource), .explicit),
            FieldSchema(2, "scopeLogs", .message(.scopeLogs), .repeated),
            FieldSchema(3, "schemaUrl", .string),
        ])

    /// `opentelemetry.proto.logs.v1.ScopeLogs`.
    static let scopeLogs = MessageSchema(
        "ScopeLogs",
        [
            FieldSchema(1, "scope", .message(.instrumentationScope), .explicit),
            FieldSchema(2, "logRecords", .message(.logRecord), .repeated),
            FieldSchema(3, "schemaUrl", .string),
        ])

    /// `opentelemetry.proto.logs.v1.LogRecord` (field 4 is reserved).
    static let logRecord = MessageSchema(
        "LogRecord",
        [
            FieldSchema(1, "timeUnixNano", .fixed64),
            FieldSchema(2, "severityNumber", .enumeration(.severityNumber)),
            FieldSchema(3, "severityText", .string),
            FieldSchema(5, "body", .message(.anyValue), .explicit),
            FieldSchema(6, "attributes", .message(.keyValue), .repeated),
            FieldSchema(7, "droppedAttributesCount", .uint32),
            FieldSchema(8, "flags", .fixed32),
            FieldSchema(9, "traceId", .bytesHex(16)),
            FieldSchema(10, "spanId", .bytesHex(8)),
            FieldSchema(11, "observedTimeUnixNano", .fixed64),
            FieldSchema(12, "eventName", .string),
        ])
}
