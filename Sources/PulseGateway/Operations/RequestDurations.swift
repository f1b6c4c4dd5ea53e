import PulseHTTP
import Synchronization

/// `pulsegate_http_request_duration_seconds`: how long the gateway took to answer, from the
/// router receiving the complete request to the response being ready (body receipt and sending
/// are the HTTP server's), by `route` and `status` class (`2xx`, `4xx`, `5xx`). Routes are the
/// fixed set the router knows (`/v1/logs`, …, `other`), so the label set stays bounded.
final class RequestDurations: Sendable {
    /// Bucket upper bounds, seconds.
    static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private let series = Mutex<[String: HistogramCounts]>([:])

    /// Records one answer that took `seconds`.
    func observe(route: String, status: Int, seconds: Double) {
        let key = route + "\u{0}" + Self.statusClass(status)
        series.withLock { all in
            all[key, default: HistogramCounts(bucketCount: Self.bounds.count)].observe(seconds, bounds: Self.bounds)
        }
    }

    /// Answers recorded for a route and status class (for tests and the status page).
    func count(route: String, statusClass: String) -> Int {
        series.withLock { $0[route + "\u{0}" + statusClass]?.count ?? 0 }
    }

    /// `2xx` for 200, and so on.
    static func statusClass(_ status: Int) -> String { "\(status / 100)xx" }

    func render(into out: inout PrometheusExposition) {
        let snapshot = series.withLock { $0 }
        out.family(
            "pulsegate_http_request_duration_seconds", .histogram,
            "Time from a complete request to its response, by route and status class.")
        for key in snapshot.keys.sorted() {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            out.histogram(
                "pulsegate_http_request_duration_seconds", labels: ["route": parts[0], "status": parts[1]],
                bounds: Self.bounds, snapshot[key]!)
        }
    }
}
