import PulseKit

/// `GET /status` as HTML: one self-contained page (inline CSS, no script, no external asset) an
/// operator reads first — upstream, outbox, per-app intake and forwarding, dead letters with the
/// upstream's code and message, the latest rejections with their reasons. Every figure carries a
/// `data-metric` attribute naming the `/metrics` series it equals, so a browser test can compare
/// the rendered page with `/metrics`. Every text from outside (App IDs, messages, client
/// addresses) is HTML-escaped.
enum StatusPage {
    /// The page for `snapshot`; it refreshes itself every 10 seconds (`<meta http-equiv=refresh>`).
    static func html(_ snapshot: StatusSnapshot) -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10">
            <title>PulseGate status</title>
            <style>
            body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d2430;background:#f7f8fa}
            h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
            table{border-collapse:collapse;background:#fff;min-width:40em}
            th,td{border:1px solid #d5d9e0;padding:.3em .6em;text-align:left;vertical-align:top}
            th{background:#eef1f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
            .ok{color:#17703a}.bad{color:#b3261e;font-weight:600}.muted{color:#667085}
            </style></head><body>
            <h1>PulseGate status</h1>

            """
        out += "<p class=\"muted\">version \(escape(snapshot.version)) · generated "
        out += "<span id=\"generated\">\(RFC3339.format(epochMilliseconds: snapshot.generatedAt))</span></p>\n"

        let health = snapshot.upstreamHealth
        out += "<h2>Upstream</h2>\n<table id=\"upstream\">\n"
        out += row("address", escape(snapshot.upstream))
        out += row(
            "state",
            health.failing
                ? "<span class=\"bad\">failing for \(seconds(Double(health.failingForMilliseconds) / 1000)) "
                    + "(\(health.failures) failures): \(escape(health.lastReason))</span>"
                : "<span class=\"ok\">forwarding</span>")
        out += row("open connections", figure(snapshot.upstreamConnections, "pulsegate_upstream_connections"))
        out += row("outages since start", String(health.outages))
        out += "</table>\n"

        out += "<h2>Outbox</h2>\n<table id=\"outbox\">\n"
        out += row("batches waiting", figure(snapshot.outboxBatches, "pulsegate_outbox_batches"))
        out += row("payload bytes", figure(snapshot.outboxBytes, "pulsegate_outbox_bytes"))
        out += row(
            "oldest",
            "<span data-metric=\"pulsegate_outbox_oldest_age_seconds\" data-value=\"\(snapshot.oldestAgeSeconds)\">"
                + "\(seconds(snapshot.oldestAgeSeconds))</span>")
        out += row("dead letters", figure(snapshot.deadLetterCount, "pulsegate_dead_letters"))
        out += "</table>\n"

        out += "<h2>Apps</h2>\n<table id=\"apps\">\n<tr><th>app</th><th>requests</th><th>accepted</th>"
        out += "<th>accepted/min</th><th>records</th><th>rejected</th><th>duplicates</th><th>forwarded</th>"
        out += "<th>forwarded/min</th><th>dead letters</th><th>outbox</th><th>policy revision</th></tr>\n"
        for app in snapshot.apps {
            let label = "{app=\"\(escape(app.app))\"}"
            out += "<tr data-app=\"\(escape(app.app))\"><td>\(escape(app.app))</td>"
            out += cell(app.requests, "pulsegate_app_requests_total" + label)
            out += cell(app.accepted, "pulsegate_app_batches_accepted_total" + label)
            out += "<td class=\"n\">\(rate(app.acceptedPerMinute))</td>"
            out += cell(app.records, "pulsegate_app_records_total" + label)
            out += cell(app.rejected, "sum(pulsegate_app_rejections_total" + label + ")")
            out += cell(app.duplicates, "pulsegate_app_duplicates_total" + label)
            out += cell(app.forwarded, "pulsegate_app_forwarded_total" + label)
            out += "<td class=\"n\">\(rate(app.forwardedPerMinute))</td>"
            out += cell(app.deadLetters, "pulsegate_app_dead_letters_total" + label)
            out += cell(app.outboxBatches, "pulsegate_app_outbox_batches" + label)
            out += "<td class=\"n\">\(app.policyRevision)</td></tr>\n"
        }
        if snapshot.apps.isEmpty { out += "<tr><td colspan=\"12\" class=\"muted\">no traffic yet</td></tr>\n" }
        out += "</table>\n"

        out += "<h2>Dead letters</h2>\n<table id=\"dead-letters\">\n<tr><th>seq</th><th>app</th><th>kind</th>"
        out +=
            "<th>upstream code</th><th>upstream message</th><th>failed at</th><th>batch id</th><th>request id</th></tr>\n"
        for letter in snapshot.deadLetters {
            out += "<tr><td class=\"n\">\(letter.seq)</td><td>\(escape(letter.app))</td><td>\(letter.kind)</td>"
            out += "<td class=\"n\">\(letter.code)</td><td>\(escape(letter.message))</td>"
            out +=
                "<td>\(RFC3339.format(epochMilliseconds: letter.failedAt))</td><td>\(escape(letter.httpBatchID))</td>"
            out += "<td>\(escape(letter.requestID ?? "-"))</td></tr>\n"
        }
        if snapshot.deadLetters.isEmpty { out += "<tr><td colspan=\"8\" class=\"muted\">none</td></tr>\n" }
        out += "</table>\n"

        out += "<h2>Latest rejections</h2>\n<table id=\"rejections\">\n<tr><th>at</th><th>app</th><th>route</th>"
        out += "<th>status</th><th>reason</th><th>client</th><th>request id</th></tr>\n"
        for entry in snapshot.rejections {
            out += "<tr><td>\(RFC3339.format(epochMilliseconds: entry.at))</td><td>\(escape(entry.app))</td>"
            out +=
                "<td>\(escape(entry.route))</td><td class=\"n\">\(entry.status)\(entry.partial ? " (partial)" : "")</td>"
            out += "<td>\(escape(entry.reason))</td><td>\(escape(entry.client))</td>"
            out += "<td>\(escape(entry.requestID))</td></tr>\n"
        }
        if snapshot.rejections.isEmpty { out += "<tr><td colspan=\"7\" class=\"muted\">none</td></tr>\n" }
        out += "</table>\n<p class=\"muted\">Same data: <a href=\"/status.json\">/status.json</a> · "
        out += "<a href=\"/metrics\">/metrics</a></p>\n</body></html>\n"
        return out
    }

    private static func row(_ name: String, _ value: String) -> String {
        "<tr><th>\(name)</th><td>\(value)</td></tr>\n"
    }

    private static func figure(_ value: Int, _ metric: String) -> String {
        "<span data-metric=\"\(escape(metric))\">\(value)</span>"
    }

    private static func cell(_ value: Int, _ metric: String) -> String {
        "<td class=\"n\" data-metric=\"\(escape(metric))\">\(value)</td>"
    }

    private static func rate(_ perMinute: Double) -> String {
        let tenths = (perMinute * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }

    private static func seconds(_ value: Double) -> String {
        if value < 120 { return "\(Int(value.rounded())) s" }
        if value < 7200 { return "\(Int((value / 60).rounded())) min" }
        return "\(Int((value / 3600).rounded())) h"
    }

    /// Text safe inside HTML elements and double-quoted attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
