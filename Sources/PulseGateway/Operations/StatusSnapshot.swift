import PulseJSON
import PulseKit

/// What the status page shows, read at once: the body of `GET /status.json` and the data of
/// `GET /status` (``StatusPage``). The counters are the same values `/metrics` exports under
/// `pulsegate_app_*` (per app label), `pulsegate_outbox_*`, `pulsegate_dead_letters` and
/// `pulsegate_upstream_connections`.
struct StatusSnapshot: Sendable, Equatable {
    /// One app label's figures.
    struct App: Sendable, Equatable {
        var app: String
        var requests: Int
        var accepted: Int
        var records: Int
        var rejected: Int
        var duplicates: Int
        var conflicts: Int
        var forwarded: Int
        var deadLetters: Int
        var outboxBatches: Int
        /// HTTP batches accepted per minute over the last minute.
        var acceptedPerMinute: Double
        /// Pulse batches forwarded per minute over the last minute.
        var forwardedPerMinute: Double
        /// The cached policy revision (0: none).
        var policyRevision: Int64
    }

    var generatedAt: Int64
    var version: String
    var upstream: String
    var upstreamConnections: Int
    var upstreamHealth: UpstreamHealth.Snapshot
    var outboxBatches: Int
    var outboxBytes: Int
    var oldestAgeSeconds: Double
    var deadLetterCount: Int
    var apps: [App]
    var deadLetters: [GatewayStore.DeadLetter]
    var rejections: [RejectionLog.Entry]

    /// The `/status.json` body.
    func json() -> [UInt8] {
        var writer = JSONWriter(capacity: 2048)
        writer.beginObject()
        writer.field("generatedAt", RFC3339.format(epochMilliseconds: generatedAt))
        writer.field("version", version)
        writer.object("upstream") { writer in
            writer.field("address", upstream)
            writer.field("connections", upstreamConnections)
            writer.field("failing", upstreamHealth.failing)
            writer.field("failures", upstreamHealth.failures)
            writer.field("failingForSeconds", Double(upstreamHealth.failingForMilliseconds) / 1000)
            writer.field("lastFailure", upstreamHealth.lastReason.isEmpty ? nil : upstreamHealth.lastReason)
            writer.field("outages", upstreamHealth.outages)
        }
        writer.object("outbox") { writer in
            writer.field("batches", outboxBatches)
            writer.field("bytes", outboxBytes)
            writer.field("oldestAgeSeconds", oldestAgeSeconds)
            writer.field("deadLetters", deadLetterCount)
        }
        writer.objects("apps", apps) { writer, app in
            writer.field("app", app.app)
            writer.field("requests", app.requests)
            writer.field("accepted", app.accepted)
            writer.field("records", app.records)
            writer.field("rejected", app.rejected)
            writer.field("duplicates", app.duplicates)
            writer.field("conflicts", app.conflicts)
            writer.field("forwarded", app.forwarded)
            writer.field("deadLetters", app.deadLetters)
            writer.field("outboxBatches", app.outboxBatches)
            writer.field("acceptedPerMinute", app.acceptedPerMinute)
            writer.field("forwardedPerMinute", app.forwardedPerMinute)
            writer.field("policyRevision", app.policyRevision)
        }
        writer.objects("deadLetters", deadLetters) { writer, letter in
            writer.field("seq", letter.seq)
            writer.field("app", letter.app)
            writer.field("kind", letter.kind.description)
            writer.field("code", letter.code)
            writer.field("message", letter.message)
            writer.field("failedAt", RFC3339.format(epochMilliseconds: letter.failedAt))
            writer.field("batchId", letter.httpBatchID)
            writer.field("requestId", letter.requestID)
        }
        writer.objects("rejections", rejections) { writer, entry in
            writer.field("at", RFC3339.format(epochMilliseconds: entry.at))
            writer.field("requestId", entry.requestID)
            writer.field("app", entry.app)
            writer.field("route", entry.route)
            writer.field("status", entry.status)
            writer.field("partial", entry.partial)
            writer.field("reason", entry.reason)
            writer.field("client", entry.client)
        }
        writer.endObject()
        return writer.bytes
    }
}
