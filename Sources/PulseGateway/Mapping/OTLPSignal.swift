import OTLPProtobuf

/// The three OTLP/HTTP signals the intake accepts: the transcoder's enum (one signal enum for the
/// gateway and `OTLPProtobuf`), with what the intake and the mapping need to know of each.
typealias OTLPSignal = OTLPProtobufSignal

extension OTLPProtobufSignal {
    /// The top-level array of an export request.
    var resourceKey: String {
        switch self {
        case .logs: return "resourceLogs"
        case .traces: return "resourceSpans"
        case .metrics: return "resourceMetrics"
        }
    }

    /// The per-resource array of scopes.
    var scopeKey: String {
        switch self {
        case .logs: return "scopeLogs"
        case .traces: return "scopeSpans"
        case .metrics: return "scopeMetrics"
        }
    }

    /// The partial-success counter of the export response.
    var rejectedKey: String {
        switch self {
        case .logs: return "rejectedLogRecords"
        case .traces: return "rejectedSpans"
        case .metrics: return "rejectedDataPoints"
        }
    }

    /// What one record of this signal is called in messages.
    var recordNoun: String {
        switch self {
        case .logs: return "log record"
        case .traces: return "span"
        case .metrics: return "data point"
        }
    }

    init?(path: String) {
        switch path {
        case "/v1/logs", "/v1/logs/": self = .logs
        case "/v1/traces", "/v1/traces/": self = .traces
        case "/v1/metrics", "/v1/metrics/": self = .metrics
        default: return nil
        }
    }
}
