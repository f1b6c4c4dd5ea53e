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
    private struct Counters {
        var requests: [String: Int] = [:]
        var wireBytes = 0
        var decodedBytes = 0
        var records: [String: Int] = [:]
        var duplicates = 0
        var conflicts = 0
        var oversized = 0
        var derivedIdentities = 0
        var forwards: [String: Int] = [:]
        var latencyBuckets = [Int](repeating: 0, count: GatewayMetrics.latencyBounds.count)
        var latencyCount = 0
        var latencySum = 0.0
        var connects: [String: Int] = [:]
        var pruned = 0
    }

    static let latencyBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private let counters = Mutex(Counters())
    /// Per-app counters with bounded `app` labels.
    let apps = AppMetrics()
    /// `pulsegate_http_request_duration_seconds`.
    let durations = RequestDurations()

    /// Creates zeroed counters.
    package init() {}

    func request(route: String, code: Int) {
        counters.withLock { $0.requests["\(route)\u{0}\(code)", default: 0] += 1 }
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
        counters.withLock { counters in
            counters.latencyCount += 1
            counters.latencySum += seconds
            for (index, bound) in Self.latencyBounds.enumerated() where seconds <= bound {
                counters.latencyBuckets[index] += 1
            }
        }
    }

    func connect(result: String) {
        counters.withLock { $0.connects[result, default: 0] += 1 }
    }

    func pruned(_ count: Int) { counters.withLock { $0.pruned += count } }

    /// Requests counted for a route and status (for tests and logs).
    package func requestCount(route: String, code: Int) -> Int {
        counters.withLock { $0.requests["\(route)\u{0}\(code)"] ?? 0 }
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
        var databaseCommits = 0
        var groupCommits = 0
        var groupCommittedJobs = 0
        var largestGroupCommit = 0
        /// Committed group commits by size (per ``SQLiteExecutor/Statistics/groupSizeBounds``, the last
        /// one above them) and the jobs they held.
        var groupSizeCounts: [Int] = []
        var groupSizeSum = 0
        /// Log lines the log stream could not take (a full disk, a closed pipe).
        var logLinesDropped = 0
        var requestMemoryReserved = 0
        var requestMemoryBudget = 0
        /// Per app: devices known to `/v1/diagnostics`, those with gaps, and their missing batches.
        var diagnostics: [String: (devices: Int, withGaps: Int, missing: Int64)] = [:]
    }

    /// The Prometheus text exposition (version 0.0.4).
    func render(_ gauges: Gauges) -> String {
        let snapshot = counters.withLock { $0 }
        var out = ""
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        header("pulsegate_http_requests_total", "counter", "HTTP requests by route and status code.")
        for key in snapshot.requests.keys.sorted() {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out +=
                "pulsegate_http_requests_total{route=\"\(parts[0])\",code=\"\(parts[1])\"} \(snapshot.requests[key]!)\n"
        }
        header("pulsegate_http_request_bytes_total", "counter", "Request body bytes, as received and decoded.")
        out += "pulsegate_http_request_bytes_total{stage=\"wire\"} \(snapshot.wireBytes)\n"
        out += "pulsegate_http_request_bytes_total{stage=\"decoded\"} \(snapshot.decodedBytes)\n"
        header("pulsegate_intake_records_total", "counter", "Records accepted into the outbox, by signal.")
        for key in snapshot.records.keys.sorted() {
            out += "pulsegate_intake_records_total{signal=\"\(key)\"} \(snapshot.records[key]!)\n"
        }
        header("pulsegate_duplicates_total", "counter", "Batches answered as duplicates.")
        out += "pulsegate_duplicates_total \(snapshot.duplicates)\n"
        header("pulsegate_conflicts_total", "counter", "Batch ids reused with another body (stored as own batches).")
        out += "pulsegate_conflicts_total \(snapshot.conflicts)\n"
        header("pulsegate_oversized_events_total", "counter", "Records dropped as too large for a Pulse batch.")
        out += "pulsegate_oversized_events_total \(snapshot.oversized)\n"
        header(
            "pulsegate_derived_identities_total", "counter",
            "Resources accepted with an identity the gateway derived (no device or installation id, platform or SDK version)."
        )
        out += "pulsegate_derived_identities_total \(snapshot.derivedIdentities)\n"
        header("pulsegate_outbox_batches", "gauge", "Pulse batches waiting in the outbox.")
        out += "pulsegate_outbox_batches \(gauges.outboxBatches)\n"
        header("pulsegate_outbox_bytes", "gauge", "Payload bytes waiting in the outbox.")
        out += "pulsegate_outbox_bytes \(gauges.outboxBytes)\n"
        header("pulsegate_outbox_oldest_age_seconds", "gauge", "Age of the oldest outbox row.")
        out += "pulsegate_outbox_oldest_age_seconds \(gauges.oldestAgeSeconds)\n"
        header("pulsegate_dead_letters", "gauge", "Pulse batches parked in the dead-letter table.")
        out += "pulsegate_dead_letters \(gauges.deadLetters)\n"
        header("pulsegate_forward_total", "counter", "Upstream send outcomes by batch kind.")
        for key in snapshot.forwards.keys.sorted() {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "pulsegate_forward_total{kind=\"\(parts[0])\",result=\"\(parts[1])\"} \(snapshot.forwards[key]!)\n"
        }
        header("pulsegate_forward_latency_seconds", "histogram", "Upstream request latency.")
        for (index, bound) in Self.latencyBounds.enumerated() {
            out += "pulsegate_forward_latency_seconds_bucket{le=\"\(bound)\"} \(snapshot.latencyBuckets[index])\n"
        }
        out += "pulsegate_forward_latency_seconds_bucket{le=\"+Inf\"} \(snapshot.latencyCount)\n"
        out += "pulsegate_forward_latency_seconds_sum \(snapshot.latencySum)\n"
        out += "pulsegate_forward_latency_seconds_count \(snapshot.latencyCount)\n"
        header("pulsegate_upstream_connections", "gauge", "Open upstream connections.")
        out += "pulsegate_upstream_connections \(gauges.upstreamConnections)\n"
        header(
            "pulsegate_upstream_evictions_total", "counter",
            "Healthy upstream connections closed because the pool was full (maxConnections below the working set).")
        out += "pulsegate_upstream_evictions_total \(gauges.upstreamEvictions)\n"
        header(
            "pulsegate_upstream_connects_total", "counter",
            "Upstream handshakes (TCP connect plus CLIENT_CONNECT) by result.")
        for key in snapshot.connects.keys.sorted() {
            out += "pulsegate_upstream_connects_total{result=\"\(key)\"} \(snapshot.connects[key]!)\n"
        }
        header("pulsegate_db_commits_total", "counter", "Durable SQLite commits (each one fsync of the WAL).")
        out += "pulsegate_db_commits_total \(gauges.databaseCommits)\n"
        header("pulsegate_db_group_commits_total", "counter", "Group commits shared by concurrent writers.")
        out += "pulsegate_db_group_commits_total \(gauges.groupCommits)\n"
        header("pulsegate_db_group_committed_jobs_total", "counter", "Writes committed by group commits.")
        out += "pulsegate_db_group_committed_jobs_total \(gauges.groupCommittedJobs)\n"
        header("pulsegate_db_largest_group_commit", "gauge", "Most writes committed by one fsync so far.")
        out += "pulsegate_db_largest_group_commit \(gauges.largestGroupCommit)\n"
        header(
            "pulsegate_commit_jobs_per_fsync", "histogram",
            "Jobs (intake requests and other group-commit writes) per group-commit fsync; sum/count is the mean.")
        var cumulative = 0
        for (index, bound) in SQLiteExecutor.Statistics.groupSizeBounds.enumerated() {
            cumulative += index < gauges.groupSizeCounts.count ? gauges.groupSizeCounts[index] : 0
            out += "pulsegate_commit_jobs_per_fsync_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        let groups = gauges.groupSizeCounts.reduce(0, +)
        out += "pulsegate_commit_jobs_per_fsync_bucket{le=\"+Inf\"} \(groups)\n"
        out += "pulsegate_commit_jobs_per_fsync_sum \(gauges.groupSizeSum)\n"
        out += "pulsegate_commit_jobs_per_fsync_count \(groups)\n"
        header(
            "pulsegate_request_memory_reserved_bytes", "gauge",
            "Memory reserved by requests in flight (bodies and their decoding working sets).")
        out += "pulsegate_request_memory_reserved_bytes \(gauges.requestMemoryReserved)\n"
        header(
            "pulsegate_request_memory_budget_bytes", "gauge", "The request memory budget (requestMemoryBudgetBytes).")
        out += "pulsegate_request_memory_budget_bytes \(gauges.requestMemoryBudget)\n"
        let apps = gauges.diagnostics.keys.sorted()
        header("pulsegate_diagnostics_devices", "gauge", "Installations that sent sequence numbers or diagnostics.")
        for app in apps {
            out += "pulsegate_diagnostics_devices{app=\"\(app)\"} \(gauges.diagnostics[app]!.devices)\n"
        }
        header(
            "pulsegate_diagnostics_devices_with_gaps", "gauge",
            "Installations with batch sequence numbers missing past the grace period.")
        for app in apps {
            out += "pulsegate_diagnostics_devices_with_gaps{app=\"\(app)\"} \(gauges.diagnostics[app]!.withGaps)\n"
        }
        header(
            "pulsegate_diagnostics_missing_batches", "gauge", "Batch sequence numbers missing past the grace period.")
        for app in apps {
            out += "pulsegate_diagnostics_missing_batches{app=\"\(app)\"} \(gauges.diagnostics[app]!.missing)\n"
        }
        header("pulsegate_dedup_pruned_total", "counter", "Expired dedup keys pruned.")
        out += "pulsegate_dedup_pruned_total \(snapshot.pruned)\n"
        header("pulsegate_log_lines_dropped_total", "counter", "Log lines dropped because the log stream failed.")
        out += "pulsegate_log_lines_dropped_total \(gauges.logLinesDropped)\n"
        return out
    }
}
