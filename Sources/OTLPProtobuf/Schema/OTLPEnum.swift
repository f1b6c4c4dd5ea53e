/// The OTLP enums (opentelemetry-proto v1) with their proto value names, which proto3 JSON also
/// accepts in place of the numbers.
package enum OTLPEnum: Sendable, CaseIterable {
    /// `opentelemetry.proto.logs.v1.SeverityNumber`.
    case severityNumber
    /// `opentelemetry.proto.trace.v1.Span.SpanKind`.
    case spanKind
    /// `opentelemetry.proto.trace.v1.Status.StatusCode`.
    case statusCode
    /// `opentelemetry.proto.metrics.v1.AggregationTemporality`.
    case aggregationTemporality

    /// The value names, index = value.
    package var names: [String] {
        switch self {
        case .severityNumber: Self.severityNames
        case .spanKind: Self.spanKindNames
        case .statusCode: Self.statusCodeNames
        case .aggregationTemporality: Self.temporalityNames
        }
    }

    private static let severityNames: [String] = {
        var names = ["SEVERITY_NUMBER_UNSPECIFIED"]
        for level in ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"] {
            for step in ["", "2", "3", "4"] { names.append("SEVERITY_NUMBER_" + level + step) }
        }
        return names
    }()

    private static let spanKindNames = [
        "SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER",
        "SPAN_KIND_CONSUMER",
    ]

    private static let statusCodeNames = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"]

    private static let temporalityNames = [
        "AGGREGATION_TEMPORALITY_UNSPECIFIED", "AGGREGATION_TEMPORALITY_DELTA", "AGGREGATION_TEMPORALITY_CUMULATIVE",
    ]
}
