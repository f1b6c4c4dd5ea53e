import PulseHTTP
import PulseKit
import PulseStorage
import Synchronization

/// The gateway's counters, rendered in the Prometheus text format by `GET /metrics`.
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `pulsegate_http_requests_total` | counter | `route`, `code` |
/// | `pulsegate_http_request_bytes_total` | counter | `stage` (`wire`, `decoded`) |
/// | `pulsegate_intake_records_total` | counter | `signal` |
/// | `pulsegate_duplicates_total` | counter | |
/// | `pulsegate_conflicts_total` | counter | |
/// | `pulsegate_oversized_events_total` | counter | |
/// | `pulsegate_derived_identities_total` | counter | |
/// | `pulsegate_outbox_batches` | gauge | |
/// | `pulsegate_outbox_bytes` | gauge | |
/// | `pulsegate_app_limited_total` | counter | `app`, `reason` (`outbox_batches`, `outbox_bytes`, `rate`) |
/// | `pulsegate_outbox_oldest_age_seconds` | gauge | |
/// | `pulsegate_dead_letters` | gauge | |
/// | `pulsegate_forward_total` | counter | `kind`, `result` (`ok`, `retry`, `dead_letter`, `fallback`) |
/// | `pulsegate_forward_latency_seconds` | histogram | |
/// | `pulsegate_upstream_connections` | gauge | |
/// | `pulsegate_upstream_evictions_total` | counter | |
/// | `pulsegate_upstream_connects_total` | counter | `result` (`ok`, `rejected`, `timeout`, `failed`): real handshakes, TCP connect plus CLIENT_CONNECT |
/// | `pulsegate_db_commits_total`, `pulsegate_db_group_commits_total`, `pulsegate_db_group_committed_jobs_total` | counter | |
/// | `pulsegate_db_largest_group_commit` | gauge | |
/// | `pulsegate_commit_jobs_per_fsync` | histogram (`le` 1 … 512) | |
/// | `pulsegate_dedup_pruned_total` | counter | |
/// | `pulsegate_log_lines_dropped_total` | counter | |
/// | `pulsegate_request_memory_reserved_bytes`, `pulsegate_request_memory_budget_bytes` | gauge | |
///
/// Per-app families are ``AppMetrics``', request durations ``RequestDurations``'; `/metrics` adds
/// build info, configured limits and process metrics (``GatewayTelemetry``).
package final class GatewayMetrics: Sendable {
    /// A `pulsegate_http_requests_total` series: hashed as it is, with no label text built per
    /// request.
    private struct RequestSeries: Hashable {
        let route: String
        let code: Int
    }

    private struct Counters {
        var requests: [RequestSeries: Int] = [:]
        var wireBytes = 0
        var decodedBytes = 0
        var records: [String: Int] = [:]
        var duplicates = 0
        var conflicts = 0
        var oversized = 0
        var derivedIdentities = 0
        var forwards: [String: Int] = [:]
        /// `pulsegate_forward_latency_seconds`, on the buckets of ``RequestDurations``.
        var latency = HistogramCounts(bucketCount: RequestDurations.bounds.count)
        var connects: [String: Int] = [:]
        var pruned = 0
    }

    private let counters = Mutex(Counters())
    /// Per-app counters with bounded `app` labels.
    let apps = AppMetrics()
    /// `pulsegate_http_request_duration_seconds`.
    let durations = RequestDurations()

    /// Creates zeroed counters.
    package init() {}

    func request(route: String, code: Int) {
        counters.withLock { $0.requests[RequestSeries(route: route, code: code), default: 0] += 1 }
    }

    func bytes(wire: Int, decoded: Int) {
        counters.withLock {
            $0.wireBytes += wire
            $0.decodedBytes += decoded
        }
    }

    func records(_ count: Int, signal: String) {
        counters.withLock { $0.records[signal, default: 0] += count }
    }

    func duplicate() { counters.withLock { $0.duplicates += 1 } }

    func conflict() { counters.withLock { $0.conflicts += 1 } }

    func oversized(_ count: Int) { counters.withLock { $0.oversized += count } }

    func derivedIdentities(_ count: Int) { counters.withLock { $0.derivedIdentities += count } }

    func forwarded(kind: OutboxBatchKind, result: String, app: String) {
        counters.withLock { $0.forwards["\(kind)\u{0}\(result)", default: 0] += 1 }
        if result == "ok" { apps.forwarded(app: app) }
        if result == "dead_letter" { apps.deadLettered(app: app) }
    }

    func forwardLatency(seconds: Double) {
        counters.withLock { $0.latency.observe(seconds, bounds: RequestDurations.bounds) }
    }

    func connect(result: String) {
        counters.withLock { $0.connects[result, default: 0] += 1 }
    }

    func pruned(_ count: Int) { counters.withLock { $0.pruned += count } }

    /// Requests counted for a route and status (for tests and logs).
    package func requestCount(route: String, code: Int) -> Int {
        counters.withLock { $0.requests[RequestSeries(route: route, code: code)] ?? 0 }
    }

    /// Duplicates answered so far.
    package var duplicateCount: Int { counters.withLock { $0.duplicates } }
    /// Conflicting batches (a batch id reused with another body) stored so far.
    package var conflictCount: Int { counters.withLock { $0.conflicts } }

    /// Gauges read at scrape time.
    struct Gauges {
        var outboxBatches = 0
        var outboxBytes = 0
        var oldestAgeSeconds = 0.0
        var deadLetters = 0
        var upstreamConnections = 0
        var upstreamEvictions = 0
        /// The store's group-commit executor (``GatewayStoring/commitStatistics``).
        var database = SQLiteExecutor.Statistics()
        /// Log lines the log stream could not take (a full disk, a closed pipe).
        var logLinesDropped = 0
        var requestMemoryReserved = 0
        var requestMemoryBudget = 0
        /// Per app: devices known to `/v1/diagnostics`, those with gaps, and their missing batches.
        var diagnostics: [String: (devices: Int, withGaps: Int, missing: Int64)] = [:]
    }

    /// Appends the gateway's families to the `/metrics` exposition.
    func render(_ gauges: Gauges, into out: inout PrometheusExposition) {
        let snapshot = counters.withLock { $0 }
        out.family("pulsegate_http_requests_total", .counter, "HTTP requests by route and status code.")
        // Ordered by route, then by the code's text.
        let requests = snapshot.requests.map { (route: $0.key.route, code: String($0.key.code), count: $0.value) }
        for series in requests.sorted(by: { ($0.route, $0.code) < ($1.route, $1.code) }) {
            out.sample(
                "pulsegate_http_requests_total", labels: ["route": series.route, "code": series.code], series.count)
        }
        out.family("pulsegate_http_request_bytes_total", .counter, "Request body bytes, as received and decoded.")
        out.sample("pulsegate_http_request_bytes_total", labels: ["stage": "wire"], snapshot.wireBytes)
        out.sample("pulsegate_http_request_bytes_total", labels: ["stage": "decoded"], snapshot.decodedBytes)
        out.metric(
            "pulsegate_intake_records_total", .counter, "Records accepted into the outbox, by signal.", label: "signal",
            snapshot.records)
        out.metric("pulsegate_duplicates_total", .counter, "Batches answered as duplicates.", snapshot.duplicates)
        out.metric(
            "pulsegate_conflicts_total", .counter, "Batch ids reused with another body (stored as own batches).",
            snapshot.conflicts)
        out.metric(
            "pulsegate_oversized_events_total", .counter, "Records dropped as too large for a Pulse batch.",
            snapshot.oversized)
        out.metric(
            "pulsegate_derived_identities_total", .counter,
            "Resources accepted with an identity the gateway derived (no device or installation id, platform or SDK version).",
            snapshot.derivedIdentities)
        out.metric("pulsegate_outbox_batches", .gauge, "Pulse batches waiting in the outbox.", gauges.outboxBatches)
        out.metric("pulsegate_outbox_bytes", .gauge, "Payload bytes waiting in the outbox.", gauges.outboxBytes)
        out.metric(
            "pulsegate_outbox_oldest_age_seconds", .gauge, "Age of the oldest outbox row.", gauges.oldestAgeSeconds)
        out.metric(
            "pulsegate_dead_letters", .gauge, "Pulse batches parked in the dead-letter table.", gauges.deadLetters)
        out.family("pulsegate_forward_total", .counter, "Upstream send outcomes by batch kind.")
        for (key, count) in snapshot.forwards.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            out.sample("pulsegate_forward_total", labels: ["kind": parts[0], "result": parts[1]], count)
        }
        out.family("pulsegate_forward_latency_seconds", .histogram, "Upstream request latency.")
        out.histogram("pulsegate_forward_latency_seconds", bounds: RequestDurations.bounds, snapshot.latency)
        out.metric(
            "pulsegate_upstream_connections", .gauge, "Open upstream connections.", gauges.upstreamConnections)
        out.metric(
            "pulsegate_upstream_evictions_total", .counter,
            "Healthy upstream connections closed because the pool was full (maxConnections below the working set).",
            gauges.upstreamEvictions)
        out.metric(
            "pulsegate_upstream_connects_total", .counter,
            "Upstream handshakes (TCP connect plus CLIENT_CONNECT) by result.", label: "result", snapshot.connects)
        out.metric(
            "pulsegate_db_commits_total", .counter, "Durable SQLite commits (each one fsync of the WAL).",
            gauges.database.commits)
        out.metric(
            "pulsegate_db_group_commits_total", .counter, "Group commits shared by concurrent writers.",
            gauges.database.groupCommits)
        out.metric(
            "pulsegate_db_group_committed_jobs_total", .counter, "Writes committed by group commits.",
            gauges.database.groupCommittedJobs)
        out.metric(
            "pulsegate_db_largest_group_commit", .gauge, "Most writes committed by one fsync so far.",
            gauges.database.largestGroupCommit)
        out.family(
            "pulsegate_commit_jobs_per_fsync", .histogram,
            "Jobs (intake requests and other group-commit writes) per group-commit fsync; sum/count is the mean.")
        out.histogram(
            "pulsegate_commit_jobs_per_fsync", bounds: SQLiteExecutor.Statistics.groupSizeBounds.map(Double.init),
            counts: gauges.database.groupSizeCounts, sum: Double(gauges.database.groupSizeSum),
            count: gauges.database.groupSizeCounts.reduce(0, +)
        )
        out.metric(
            "pulsegate_request_memory_reserved_bytes", .gauge,
            "Memory reserved by requests in flight (bodies and their decoding working sets).",
            gauges.requestMemoryReserved)
        out.metric(
            "pulsegate_request_memory_budget_bytes", .gauge, "The request memory budget (requestMemoryBudgetBytes).",
            gauges.requestMemoryBudget)
        out.metric(
            "pulsegate_diagnostics_devices", .gauge, "Installations that sent sequence numbers or diagnostics.",
            label: "app", gauges.diagnostics.mapValues(\.devices))
        out.metric(
            "pulsegate_diagnostics_devices_with_gaps", .gauge,
            "Installations with batch sequence numbers missing past the grace period.", label: "app",
            gauges.diagnostics.mapValues(\.withGaps))
        out.metric(
            "pulsegate_diagnostics_missing_batches", .gauge, "Batch sequence numbers missing past the grace period.",
            label: "app", gauges.diagnostics.mapValues { Int($0.missing) })
        out.metric("pulsegate_dedup_pruned_total", .counter, "Expired dedup keys pruned.", snapshot.pruned)
        out.metric(
            "pulsegate_log_lines_dropped_total", .counter, "Log lines dropped because the log stream failed.",
            gauges.logLinesDropped)
    }
}
