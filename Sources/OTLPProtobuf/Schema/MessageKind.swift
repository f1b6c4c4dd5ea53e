/// Every OTLP message the transcoder knows (opentelemetry-proto v1), each with its schema.
package enum MessageKind: Int, Sendable, CaseIterable {
    // common.proto and resource.proto
    case anyValue
    case arrayValue
    case keyValueList
    case keyValue
    case instrumentationScope
    case entityRef
    case resource
    // logs.proto and logs_service.proto
    case exportLogsServiceRequest
    case resourceLogs
    case scopeLogs
    case logRecord
    // trace.proto and trace_service.proto
    case exportTraceServiceRequest
    case resourceSpans
    case scopeSpans
    case span
    case spanEvent
    case spanLink
    case status
    // metrics.proto and metrics_service.proto
    case exportMetricsServiceRequest
    case resourceMetrics
    case scopeMetrics
    case metric
    case gauge
    case sum
    case histogram
    case exponentialHistogram
    case summary
    case numberDataPoint
    case histogramDataPoint
    case exponentialHistogramDataPoint
    case buckets
    case summaryDataPoint
    case valueAtQuantile
    case exemplar

    /// The export request message of `signal`.
    package static func request(_ signal: OTLPProtobufSignal) -> MessageKind {
        switch signal {
        case .logs: .exportLogsServiceRequest
        case .traces: .exportTraceServiceRequest
        case .metrics: .exportMetricsServiceRequest
        }
    }

    /// This message's schema.
    package var schema: MessageSchema {
        switch self {
        case .anyValue: .anyValue
        case .arrayValue: .arrayValue
        case .keyValueList: .keyValueList
        case .keyValue: .keyValue
        case .instrumentationScope: .instrumentationScope
        case .entityRef: .entityRef
        case .resource: .resource
        case .exportLogsServiceRequest: .exportLogsServiceRequest
        case .resourceLogs: .resourceLogs
        case .scopeLogs: .scopeLogs
        case .logRecord: .logRecord
        case .exportTraceServiceRequest: .exportTraceServiceRequest
        case .resourceSpans: .resourceSpans
        case .scopeSpans: .scopeSpans
        case .span: .span
        case .spanEvent: .spanEvent
        case .spanLink: .spanLink
        case .status: .status
        case .exportMetricsServiceRequest: .exportMetricsServiceRequest
        case .resourceMetrics: .resourceMetrics
        case .scopeMetrics: .scopeMetrics
        case .metric: .metric
        case .gauge: .gauge
        case .sum: .sum
        case .histogram: .histogram
        case .exponentialHistogram: .exponentialHistogram
        case .summary: .summary
        case .numberDataPoint: .numberDataPoint
        case .histogramDataPoint: .histogramDataPoint
        case .exponentialHistogramDataPoint: .exponentialHistogramDataPoint
        case .buckets: .buckets
        case .summaryDataPoint: .summaryDataPoint
        case .valueAtQuantile: .valueAtQuantile
        case .exemplar: .exemplar
        }
    }

    /// All schemas indexed by `rawValue`, for lookups without a switch.
    static let table: [MessageSchema] = allCases.map(\.schema)

    /// The layouts of ``table``'s schemas, indexed by `rawValue`, for the transcoder's inner loops.
    static let layouts = MessageLayouts(table.map(\.layout))
}

/// Every ``MessageKind``'s ``MessageLayout`` by `rawValue`, in memory that lives as long as the
/// process (the schemas it lays out are static too) and is never written after it is set up.
/// Each layout here has its ``MessageLayout/keyBase``: every field of every message has a key slot
/// of its own, `keySlotCount` in all.
struct MessageLayouts: @unchecked Sendable {
    let base: UnsafePointer<MessageLayout>
    let keySlotCount: Int

    init(_ layouts: [MessageLayout]) {
        let copy = UnsafeMutablePointer<MessageLayout>.allocate(capacity: layouts.count)
        var keySlotCount = 0
        for (index, var layout) in layouts.enumerated() {
            layout.keyBase = keySlotCount
            keySlotCount += layout.fieldCount
            (copy + index).initialize(to: layout)
        }
        base = UnsafePointer(copy)
        self.keySlotCount = keySlotCount
    }
}
