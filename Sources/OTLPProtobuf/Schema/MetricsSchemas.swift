// metrics.proto and metrics_service.proto (opentelemetry-proto v1).

extension MessageSchema {
    /// `opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest`.
    static let exportMetricsServiceRequest = MessageSchema(
        "ExportMetricsServiceRequest",
        [FieldSchema(1, "resourceMetrics", .message(.resourceMetrics), .repeated)])

    /// `opentelemetry.proto.metrics.v1.ResourceMetrics`.
    static let resourceMetrics = MessageSchema(
        "ResourceMetrics",
        [
            FieldSchema(1, "resource", .message(.resource), .explicit),
            FieldSchema(2, "scopeMetrics", .message(.scopeMetrics), .repeated),
            FieldSchema(3, "schemaUrl", .string),
        ])

    /// `opentelemetry.proto.metrics.v1.ScopeMetrics`.
    static let scopeMetrics = MessageSchema(
        "ScopeMetrics",
        [
            FieldSchema(1, "scope", .message(.instrumentationScope), .explicit),
            FieldSchema(2, "metrics", .message(.metric), .repeated),
            FieldSchema(3, "schemaUrl", .string),
        ])

    /// `opentelemetry.proto.metrics.v1.Metric`: the `data` oneof holds one of the five types
    /// (fields 4, 6 and 8 are reserved).
    static let metric = MessageSchema(
        "Metric",
        [
            FieldSchema(1, "name", .string),
            FieldSchema(2, "description", .string),
            FieldSchema(3, "unit", .string),
            FieldSchema(5, "gauge", .message(.gauge), .oneof(0)),
            FieldSchema(7, "sum", .message(.sum), .oneof(0)),
            FieldSchema(9, "histogram", .message(.histogram), .oneof(0)),
            FieldSchema(10, "exponentialHistogram", .message(.exponentialHistogram), .oneof(0)),
            FieldSchema(11, "summary", .message(.summary), .oneof(0)),
            FieldSchema(12, "metadata", .message(.keyValue), .repeated),
        ])

    /// `opentelemetry.proto.metrics.v1.Gauge`.
    static let gauge = MessageSchema(
        "Gauge", [FieldSchema(1, "dataPoints", .message(.numberDataPoint), .repeated)])

    /// `opentelemetry.proto.metrics.v1.Sum`.
    static let sum = MessageSchema(
        "Sum",
        [
            FieldSchema(1, "dataPoints", .message(.numberDataPoint), .repeated),
            FieldSchema(2, "aggregationTemporality", .enumeration(.aggregationTemporality)),
            FieldSchema(3, "isMonotonic", .bool),
        ])

    /// `opentelemetry.proto.metrics.v1.Histogram`.
    static let histogram = MessageSchema(
        "Histogram",
        [
            FieldSchema(1, "dataPoints", .message(.histogramDataPoint), .repeated),
            FieldSchema(2, "aggregationTemporality", .enumeration(.aggregationTemporality)),
        ])

    /// `opentelemetry.proto.metrics.v1.ExponentialHistogram`.
    static let exponentialHistogram = MessageSchema(
        "ExponentialHistogram",
        [
            FieldSchema(1, "dataPoints", .message(.exponentialHistogramDataPoint), .repeated),
            FieldSchema(2, "aggregationTemporality", .enumeration(.aggregationTemporality)),
        ])

    /// `opentelemetry.proto.metrics.v1.Summary`.
    static let summary = MessageSchema(
        "Summary", [FieldSchema(1, "dataPoints", .message(.summaryDataPoint), .repeated)])

    /// `opentelemetry.proto.metrics.v1.NumberDataPoint` (field 1 is reserved).
    static let numberDataPoint = MessageSchema(
        "NumberDataPoint",
        [
            FieldSchema(2, "startTimeUnixNano", .fixed64),
            FieldSchema(3, "timeUnixNano", .fixed64),
            FieldSchema(4, "asDouble", .double, .oneof(0)),
            FieldSchema(5, "exemplars", .message(.exemplar), .repeated),
            FieldSchema(6, "asInt", .sfixed64, .oneof(0)),
            FieldSchema(7, "attributes", .message(.keyValue), .repeated),
            FieldSchema(8, "flags", .uint32),
        ])

    /// `opentelemetry.proto.metrics.v1.HistogramDataPoint` (field 1 is reserved).
    static let histogramDataPoint = MessageSchema(
        "HistogramDataPoint",
        [
            FieldSchema(2, "startTimeUnixNano", .fixed64),
            FieldSchema(3, "timeUnixNano", .fixed64),
            FieldSchema(4, "count", .fixed64),
            FieldSchema(5, "sum", .double, .explicit),
            FieldSchema(6, "bucketCounts", .fixed64, .repeated),
            FieldSchema(7, "explicitBounds", .double, .repeated),
            FieldSchema(8, "exemplars", .message(.exemplar), .repeated),
            FieldSchema(9, "attributes", .message(.keyValue), .repeated),
            FieldSchema(10, "flags", .uint32),
            FieldSchema(11, "min", .double, .explicit),
            FieldSchema(12, "max", .double, .explicit),
        ])

    /// `opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint`.
    static let exponentialHistogramDataPoint = MessageSchema(
        "ExponentialHistogramDataPoint",
        [
            FieldSchema(1, "attributes", .message(.keyValue), .repeated),
            FieldSchema(2, "startTimeUnixNano", .fixed64),
            FieldSchema(3, "timeUnixNano", .fixed64),
            FieldSchema(4, "count", .fixed64),
            FieldSchema(5, "sum", .double, .explicit),
            FieldSchema(6, "scale", .sint32),
            FieldSchema(7, "zeroCount", .fixed64),
            FieldSchema(8, "positive", .message(.buckets), .explicit),
            FieldSchema(9, "negative", .message(.buckets), .explicit),
            FieldSchema(10, "flags", .uint32),
            FieldSchema(11, "exemplars", .message(.exemplar), .repeated),
            FieldSchema(12, "min", .double, .explicit),
            FieldSchema(13, "max", .double, .explicit),
            FieldSchema(14, "zeroThreshold", .double),
        ])

    /// `opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint.Buckets`.
    static let buckets = MessageSchema(
        "ExponentialHistogramDataPoint.Buckets",
        [
            FieldSchema(1, "offset", .sint32),
            FieldSchema(2, "bucketCounts", .uint64, .repeated),
        ])

    /// `opentelemetry.proto.metrics.v1.SummaryDataPoint` (field 1 is reserved).
    static let summaryDataPoint = MessageSchema(
        "SummaryDataPoint",
        [
            FieldSchema(2, "startTimeUnixNano", .fixed64),
            FieldSchema(3, "timeUnixNano", .fixed64),
            FieldSchema(4, "count", .fixed64),
            FieldSchema(5, "sum", .double),
            FieldSchema(6, "quantileValues", .message(.valueAtQuantile), .repeated),
            FieldSchema(7, "attributes", .message(.keyValue), .repeated),
            FieldSchema(8, "flags", .uint32),
        ])

    /// `opentelemetry.proto.metrics.v1.SummaryDataPoint.ValueAtQuantile`.
    static let valueAtQuantile = MessageSchema(
        "SummaryDataPoint.ValueAtQuantile",
        [
            FieldSchema(1, "quantile", .double),
            FieldSchema(2, "value", .double),
        ])

    /// `opentelemetry.proto.metrics.v1.Exemplar` (field 1 is reserved).
    static let exemplar = MessageSchema(
        "Exemplar",
        [
            FieldSchema(2, "timeUnixNano", .fixed64),
            FieldSchema(3, "asDouble", .double, .oneof(0)),
            FieldSchema(4, "spanId", .bytesHex(8)),
            FieldSchema(5, "traceId", .bytesHex(16)),
            FieldSchema(6, "asInt", .sfixed64, .oneof(0)),
            FieldSchema(7, "filteredAttributes", .message(.keyValue), .repeated),
        ])
}
