import OTLPProtobuf

/// One of the five data members of an OTLP metric, in the order the mapper looks for them.
struct MetricData: Sendable {
    /// The JSON member (`gauge` …), also the event's `metric.type`.
    var name: String
    /// Its message, and the message of its data points.
    var kind: MessageKind
    var point: MessageKind

    static let all = [
        MetricData(name: "gauge", kind: .gauge, point: .numberDataPoint),
        MetricData(name: "sum", kind: .sum, point: .numberDataPoint),
        MetricData(name: "histogram", kind: .histogram, point: .histogramDataPoint),
        MetricData(name: "exponentialHistogram", kind: .exponentialHistogram, point: .exponentialHistogramDataPoint),
        MetricData(name: "summary", kind: .summary, point: .summaryDataPoint),
    ]
}
