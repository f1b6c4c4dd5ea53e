/// The three OTLP signals, each with its own export request and response message.
public enum OTLPProtobufSignal: String, Sendable, Hashable, CaseIterable {
    /// `ExportLogsServiceRequest` / `ExportLogsServiceResponse` (`POST /v1/logs`).
    case logs
    /// `ExportTraceServiceRequest` / `ExportTraceServiceResponse` (`POST /v1/traces`).
    case traces
    /// `ExportMetricsServiceRequest` / `ExportMetricsServiceResponse` (`POST /v1/metrics`).
    case metrics
}
