/// The OTLP signal a record or batch belongs to; each has its own endpoint path.
public enum Signal: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Log records (`/v1/logs`): logs, events, crashes, exits, session summaries, attachments.
    case logs = 0
    /// Spans (`/v1/traces`).
    case traces = 1
    /// Metric points (`/v1/metrics`).
    case metrics = 2

    /// The OTLP/HTTP path, e.g. `/v1/logs`.
    public var path: String {
        switch self {
        case .logs: return "/v1/logs"
        case .traces: return "/v1/traces"
        case .metrics: return "/v1/metrics"
        }
    }

    public var description: String {
        switch self {
        case .logs: return "logs"
        case .traces: return "traces"
        case .metrics: return "metrics"
        }
    }
}
