import PulseHTTP

/// `GET /metrics` on the ingest server's admin endpoint: ``IngestStatistics`` in the Prometheus
/// text format, plus `pulsegate_build_info` and the standard `process_*` metrics.
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `pulsegate_ingest_open_connections` | gauge | |
/// | `pulsegate_ingest_pending_batches`, `pulsegate_ingest_pending_batch_capacity` | gauge | |
/// | `pulsegate_ingest_commits_total`, `pulsegate_ingest_committed_jobs_total`, `pulsegate_ingest_group_commits_total` | counter | |
/// | `pulsegate_ingest_largest_group_commit` | gauge | |
/// | `pulsegate_ingest_rejections_total` | counter | `code` (Pulse response code) |
/// | `pulsegate_ingest_sessions`, `pulsegate_ingest_present_sessions` | gauge | `app` |
/// | `pulsegate_ingest_event_batches_total`, `pulsegate_ingest_crash_batches_total`, `pulsegate_ingest_events_total`, `pulsegate_ingest_crashes_total` | counter | `app` (seeded with what the database held at start) |
/// | `pulsegate_ingest_duplicate_batches_total`, `pulsegate_ingest_duplicate_events_total`, `pulsegate_ingest_duplicate_crashes_total` | counter | `app` |
/// | `pulsegate_ingest_log_lines_dropped_total` | counter | |
enum AdminMetrics {
    static func render(_ statistics: IngestStatistics, version: String) -> String {
        var out = PrometheusExposition()
        out.family("pulsegate_build_info", .gauge, "Always 1; the labels name the build.")
        out.sample("pulsegate_build_info", labels: ["version": version, "component": "ingest"], 1)
        func scalar(_ name: String, _ kind: PrometheusExposition.Kind, _ help: String, _ value: Int) {
            out.family(name, kind, help)
            out.sample(name, value)
        }
        scalar("pulsegate_ingest_open_connections", .gauge, "Open msgtrans connections.", statistics.openConnections)
        scalar(
            "pulsegate_ingest_pending_batches", .gauge, "Batches waiting for their commit.", statistics.pendingBatches)
        scalar(
            "pulsegate_ingest_pending_batch_capacity", .gauge, "Capacity of the ingest queue (maxPendingBatches).",
            statistics.pendingBatchCapacity)
        scalar("pulsegate_ingest_commits_total", .counter, "Durable commits (one fsync each).", statistics.commits)
        scalar(
            "pulsegate_ingest_committed_jobs_total", .counter, "Jobs carried by durable commits.",
            statistics.committedJobs)
        scalar(
            "pulsegate_ingest_group_commits_total", .counter, "Group commits (jobs committed together).",
            statistics.groupCommits)
        scalar(
            "pulsegate_ingest_largest_group_commit", .gauge, "Most jobs one group commit carried.",
            statistics.largestGroupCommit)
        out.family("pulsegate_ingest_rejections_total", .counter, "Non-zero Pulse response codes sent, by code.")
        for (code, count) in statistics.rejections.sorted(by: { $0.key < $1.key }) {
            out.sample("pulsegate_ingest_rejections_total", labels: ["code": String(code)], count)
        }
        let apps = statistics.apps.sorted { $0.key < $1.key }
        func perApp(
            _ name: String, _ kind: PrometheusExposition.Kind, _ help: String, _ value: (IngestAppStatistics) -> Int
        ) {
            out.family(name, kind, help)
            for (app, stats) in apps { out.sample(name, labels: ["app": app], value(stats)) }
        }
        perApp("pulsegate_ingest_sessions", .gauge, "Connected sessions by app.") { $0.sessions }
        perApp("pulsegate_ingest_present_sessions", .gauge, "Sessions whose presence has not expired.") {
            $0.present
        }
        perApp("pulsegate_ingest_event_batches_total", .counter, "Distinct event batches stored.") { $0.eventBatches }
        perApp("pulsegate_ingest_crash_batches_total", .counter, "Distinct crash batches stored.") { $0.crashBatches }
        perApp("pulsegate_ingest_duplicate_batches_total", .counter, "Replayed batches answered without storing.") {
            $0.duplicateBatches
        }
        perApp("pulsegate_ingest_events_total", .counter, "Distinct events stored.") { $0.events }
        perApp("pulsegate_ingest_duplicate_events_total", .counter, "Events skipped as already stored.") {
            $0.duplicateEvents
        }
        perApp("pulsegate_ingest_crashes_total", .counter, "Distinct crash reports stored.") { $0.crashes }
        perApp("pulsegate_ingest_duplicate_crashes_total", .counter, "Crash reports skipped as already stored.") {
            $0.duplicateCrashes
        }
        scalar(
            "pulsegate_ingest_log_lines_dropped_total", .counter, "Log lines the process could not write.",
            statistics.logLinesDropped)
        ProcessMetrics.current().render(into: &out)
        return out.text
    }
}
