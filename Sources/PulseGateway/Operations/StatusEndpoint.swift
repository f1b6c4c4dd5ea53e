import PulseHTTP
import PulseKit

/// `GET /status` (HTML, ``StatusPage``) and `GET /status.json` (``StatusSnapshot/json()``). Like
/// `/metrics`, restrict them to operators (nginx's site allows them from private networks only):
/// they name apps, client addresses and upstream messages.
struct StatusEndpoint: Sendable {
    static let htmlPath = "/status"
    static let jsonPath = "/status.json"
    /// Dead letters listed.
    static let deadLetterLimit = 20

    let operations: OperationsEndpoints
    let telemetry: GatewayTelemetry
    let policyCache: PolicyCache
    /// The upstream's address as the start line logs it.
    let upstream: String

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        guard request.method == .get || request.method == .head else {
            return GatewayIntake.onlyGetAllowed(request)
        }
        let snapshot = await self.snapshot()
        if request.path == Self.jsonPath {
            return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: snapshot.json())
        }
        return HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
            ],
            body: Array(StatusPage.html(snapshot).utf8))
    }

    /// Reads everything the page shows.
    func snapshot() async -> StatusSnapshot {
        let store = operations.store
        let gauges = await operations.gauges()
        let outboxRows = telemetry.apps.outboxByLabel(store.outboxDepth.apps).mapValues(\.rows)
        let counts = telemetry.apps.snapshot
        let rates = telemetry.summary.rates()
        let apps = Set(counts.keys).union(outboxRows.keys).sorted().map { label -> StatusSnapshot.App in
            let count = counts[label] ?? AppMetrics.Counts()
            return StatusSnapshot.App(
                app: label, requests: count.requests, accepted: count.accepted, records: count.records,
                rejected: count.rejected, duplicates: count.duplicates, conflicts: count.conflicts,
                forwarded: count.forwarded, deadLetters: count.deadLetters, outboxBatches: outboxRows[label] ?? 0,
                acceptedPerMinute: (rates[label]?.accepted ?? 0) * 60,
                forwardedPerMinute: (rates[label]?.forwarded ?? 0) * 60,
                policyRevision: label == AppMetrics.otherLabel ? 0 : policyCache.revision(app: label))
        }
        return StatusSnapshot(
            generatedAt: operations.clock.wallClockMilliseconds(), version: telemetry.version, upstream: upstream,
            upstreamConnections: gauges.upstreamConnections, upstreamHealth: telemetry.upstream.snapshot,
            outboxBatches: gauges.outboxBatches, outboxBytes: gauges.outboxBytes,
            oldestAgeSeconds: gauges.oldestAgeSeconds, deadLetterCount: gauges.deadLetters, apps: apps,
            deadLetters: (try? await store.deadLetters(limit: Self.deadLetterLimit)) ?? [],
            rejections: telemetry.rejections.recent)
    }
}
