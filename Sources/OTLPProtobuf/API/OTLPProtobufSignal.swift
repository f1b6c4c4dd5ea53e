/// The three OTLP signals, each with its own export request and response message and OTLP/HTTP
/// path: the one signal enum of the project (the gateway's intake and mapping, the transcoder, the
/// uploader's queue).
package enum OTLPProtobufSignal: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `ExportLogsServiceRequest` / `ExportLogsServiceResponse` (`POST /v1/logs`).
    case logs
    /// `ExportTraceServiceRequest` / `ExportTraceServiceResponse` (`POST /v1/traces`).
    case traces
    /// `ExportMetricsServiceRequest` / `ExportMetricsServiceResponse` (`POST /v1/metrics`).
    case metrics

    /// The OTLP/HTTP path, e.g. `/v1/logs`.
    package var path: String { "/v1/\(rawValue)" }

    /// `logs`, `traces` or `metrics`.
    package var description: String { rawValue }
}
