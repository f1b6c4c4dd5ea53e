import PulseHTTP
import PulseKit
import Synchronization

/// The gateway's self-observation in one place: request ids, the rejection log, upstream health,
/// per-app counters, the traffic summary and the figures `/metrics` adds to ``GatewayMetrics``'
/// (build info, configured limits, process metrics).
final class GatewayTelemetry: Sendable {
    /// A configured limit exported as a gauge.
    struct Limit: Sendable, Equatable {
        var name: String
        var help: String
        var value: Int
    }

    let rejections: RejectionLog
    let upstream: UpstreamHealth
    let summary: TrafficSummary
    let apps: AppMetrics
    let durations: RequestDurations
    /// The build's version (`pulsegate_build_info`).
    let version: String
    private let requestIDs: RequestIDGenerator
    /// The clock request durations are measured on (its monotonic timeline).
    let clock: PulseClock
    private let limits = Mutex<[Limit]>([])

    init(metrics: GatewayMetrics, environment: GatewayEnvironment, outboxDepth: @escaping @Sendable () -> Int) {
        apps = metrics.apps
        durations = metrics.durations
        rejections = RejectionLog(logger: environment.logger, clock: environment.clock)
        upstream = UpstreamHealth(logger: environment.logger, clock: environment.clock)
        summary = TrafficSummary(
            logger: environment.logger, clock: environment.clock, apps: metrics.apps,
            outboxDepth: outboxDepth)
        version = environment.version
        requestIDs = RequestIDGenerator(seed: environment.random)
        clock = environment.clock
    }

    /// The limits `/metrics` reports; set at start and on every reload.
    func configure(limits: [Limit]) {
        self.limits.withLock { $0 = limits }
    }

    /// The id of a request (its `X-Request-Id`, or a new one).
    func requestID(_ request: HTTPRequest) -> RequestID {
        RequestID(request.headers, generator: requestIDs)
    }

    /// The configured limits of a gateway.
    static func limits(_ configuration: GatewayConfiguration, policy: GatewayPolicy) -> [Limit] {
        [
            Limit(
                name: "pulsegate_config_max_body_bytes", help: "Largest decoded request body accepted (maxBodyBytes).",
                value: configuration.maxBodyBytes),
            Limit(
                name: "pulsegate_config_outbox_max_batches", help: "Outbox cap in Pulse batches (outboxMaxBatches).",
                value: policy.outboxMaxBatches),
            Limit(
                name: "pulsegate_config_outbox_max_bytes", help: "Outbox cap in payload bytes (outboxMaxBytes).",
                value: policy.outboxMaxBytes),
            Limit(
                name: "pulsegate_config_http_connection_limit", help: "Most HTTP connections at once.",
                value: configuration.httpConnectionLimit),
            Limit(
                name: "pulsegate_config_upstream_max_connections",
                help: "Most upstream connections (forwarding.maxConnections).",
                value: configuration.forwarding.maxConnections),
            Limit(
                name: "pulsegate_config_upstream_max_in_flight",
                help: "Most upstream requests in flight (forwarding.maxInFlight).",
                value: configuration.forwarding.maxInFlight),
            Limit(
                name: "pulsegate_config_dedup_retention_seconds",
                help: "How long batch ids are remembered (dedupRetentionDays).",
                value: Int(policy.dedupRetentionMilliseconds / 1000)),
        ]
    }

    /// Appends build info, the per-app families, request durations, limits and process metrics.
    func render(into out: inout PrometheusExposition, outbox: [String: GatewayStore.AppDepth]) {
        out.family("pulsegate_build_info", .gauge, "Always 1; the labels name the build.")
        out.sample("pulsegate_build_info", labels: ["version": version, "component": "gateway"], 1)
        durations.render(into: &out)
        apps.render(into: &out, outbox: outbox)
        for limit in limits.withLock({ $0 }) { out.metric(limit.name, .gauge, limit.help, limit.value) }
        ProcessMetrics.current().render(into: &out)
    }
}
