import PulseHTTP
import Synchronization

/// Per-app counters for `/metrics`, the status page and the traffic summary, with a bounded set of
/// `app` label values: when `allowedAppIds` is configured, exactly those apps (anything else is
/// counted as `other`); otherwise the first ``maxLabelledApps`` apps seen, in the order they were
/// seen, and `other` for the rest. An app keeps its label for the life of the process, so every
/// series only goes up. Requests without a well-formed App ID count as `other`.
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `pulsegate_app_requests_total` | counter | `app` |
/// | `pulsegate_app_request_bytes_total` | counter | `app` (wire bytes of intake bodies) |
/// | `pulsegate_app_batches_accepted_total` | counter | `app` (HTTP batches newly stored) |
/// | `pulsegate_app_records_total` | counter | `app` (records stored) |
/// | `pulsegate_app_rejections_total` | counter | `app`, `reason` (``RejectionReason``) |
/// | `pulsegate_app_duplicates_total` | counter | `app` |
/// | `pulsegate_app_conflicts_total` | counter | `app` |
/// | `pulsegate_app_forwarded_total` | counter | `app` (Pulse batches the upstream accepted) |
/// | `pulsegate_app_dead_letters_total` | counter | `app` (Pulse batches moved to dead letters) |
/// | `pulsegate_app_limited_total` | counter | `app`, `reason` (429 by the app's own limits: `outbox_batches`, `outbox_bytes`, `rate`) |
/// | `pulsegate_app_outbox_batches`, `pulsegate_app_outbox_bytes` | gauge | `app` (from the store's in-memory per-app depth) |
final class AppMetrics: Sendable {
    /// Apps with their own label when no `allowedAppIds` is configured.
    static let maxLabelledApps = 20
    /// The label of every app beyond the bound.
    static let otherLabel = "other"

    /// One label's counts.
    struct Counts: Sendable, Equatable {
        var requests = 0
        var bytes = 0
        var accepted = 0
        var records = 0
        var rejections: [String: Int] = [:]
        var duplicates = 0
        var conflicts = 0
        var forwarded = 0
        var deadLetters = 0
        /// Requests refused by the app's own limits (``AppAdmission``), by reason.
        var limited: [String: Int] = [:]

        /// Every rejection, whatever the reason.
        var rejected: Int { rejections.values.reduce(0, +) }

        static func + (lhs: Counts, rhs: Counts) -> Counts {
            var sum = lhs
            sum.requests += rhs.requests
            sum.bytes += rhs.bytes
            sum.accepted += rhs.accepted
            sum.records += rhs.records
            sum.rejections.merge(rhs.rejections, uniquingKeysWith: +)
            sum.duplicates += rhs.duplicates
            sum.conflicts += rhs.conflicts
            sum.forwarded += rhs.forwarded
            sum.deadLetters += rhs.deadLetters
            sum.limited.merge(rhs.limited, uniquingKeysWith: +)
            return sum
        }
    }

    private struct State {
        var counts: [String: Counts] = [:]
        /// Labels handed out when no apps are configured, in order.
        var seen: [String] = []
        /// The labelled apps when `allowedAppIds` is configured (``configure(apps:)``).
        var configured: Set<String>?

        /// The label `app` is counted under (handing out a new one while there is room), and the
        /// position of its counts when it has any: a label already seen costs one lookup.
        mutating func label(_ app: String?) -> (label: String, index: Dictionary<String, Counts>.Index?) {
            guard let app, app != AppMetrics.otherLabel else { return (AppMetrics.otherLabel, nil) }
            if let configured { return (configured.contains(app) ? app : AppMetrics.otherLabel, nil) }
            if let index = counts.index(forKey: app) { return (app, index) }
            guard seen.count < AppMetrics.maxLabelledApps else { return (AppMetrics.otherLabel, nil) }
            seen.append(app)
            counts[app] = Counts()
            return (app, counts.index(forKey: app))
        }
    }

    /// The counts and the configuration, under one lock (every update reads both).
    private let state = Mutex(State())

    /// Creates zeroed counters labelling the first apps seen.
    init() {}

    /// Labels exactly `apps` from now on (`allowedAppIds`; `nil`: the first apps seen). Set at
    /// start and on every reload.
    func configure(apps: Set<String>?) {
        state.withLock { $0.configured = apps }
    }

    /// The label `app` is counted under.
    func label(for app: String?) -> String {
        state.withLock { $0.label(app).label }
    }

    private func update(_ app: String?, _ change: (inout Counts) -> Void) {
        state.withLock { state in
            let (label, index) = state.label(app)
            if let index {
                change(&state.counts.values[index])
            } else {
                change(&state.counts[label, default: Counts()])
            }
        }
    }

    /// An intake request for `app` (nil: no well-formed App ID) with a body of `wireBytes`.
    func request(app: String?, wireBytes: Int) {
        update(app) {
            $0.requests += 1
            $0.bytes += wireBytes
        }
    }

    /// A batch newly stored with `records` records.
    func accepted(app: String, records: Int) {
        update(app) {
            $0.accepted += 1
            $0.records += records
        }
    }

    /// A request refused (or partly refused: ``RejectionReason/partial``).
    func rejected(app: String?, reason: RejectionReason) {
        update(app) { $0.rejections[reason.rawValue, default: 0] += 1 }
    }

    func duplicate(app: String) { update(app) { $0.duplicates += 1 } }

    func conflict(app: String) { update(app) { $0.conflicts += 1 } }

    func forwarded(app: String, batches: Int = 1) { update(app) { $0.forwarded += batches } }

    func deadLettered(app: String) { update(app) { $0.deadLetters += 1 } }

    /// A request refused with 429 by the app's own limits, for `reason`.
    func limited(app: String, reason: String) { update(app) { $0.limited[reason, default: 0] += 1 } }

    /// The counts per label.
    var snapshot: [String: Counts] { state.withLock { $0.counts } }

    /// The counts of every label together.
    var totals: Counts { snapshot.values.reduce(Counts(), +) }

    /// Outbox rows and bytes per App ID folded into labels.
    func outboxByLabel(_ byApp: [String: GatewayStore.AppDepth]) -> [String: GatewayStore.AppDepth] {
        var byLabel: [String: GatewayStore.AppDepth] = [:]
        for (app, depth) in byApp {
            let label = label(for: app)
            var entry = byLabel[label] ?? GatewayStore.AppDepth()
            entry.rows += depth.rows
            entry.bytes += depth.bytes
            byLabel[label] = entry
        }
        return byLabel
    }

    /// Appends the per-app families; `outbox` is the outbox depth per App ID.
    func render(into out: inout PrometheusExposition, outbox byApp: [String: GatewayStore.AppDepth]) {
        let counts = snapshot
        let labels = counts.keys.sorted()
        func family(_ name: String, _ kind: PrometheusExposition.Kind, _ help: String, _ value: (Counts) -> Int) {
            out.metric(name, kind, help, label: "app", counts.mapValues(value))
        }
        family("pulsegate_app_requests_total", .counter, "Intake requests by app.") { $0.requests }
        family("pulsegate_app_request_bytes_total", .counter, "Intake body bytes on the wire by app.") { $0.bytes }
        family("pulsegate_app_batches_accepted_total", .counter, "HTTP batches newly stored by app.") { $0.accepted }
        family("pulsegate_app_records_total", .counter, "Records stored in the outbox by app.") { $0.records }
        out.family(
            "pulsegate_app_rejections_total", .counter, "Intake requests refused or partly refused, by app and reason.")
        for label in labels {
            for (reason, count) in counts[label]!.rejections.sorted(by: { $0.key < $1.key }) {
                out.sample("pulsegate_app_rejections_total", labels: ["app": label, "reason": reason], count)
            }
        }
        family("pulsegate_app_duplicates_total", .counter, "Batches answered as duplicates by app.") { $0.duplicates }
        family("pulsegate_app_conflicts_total", .counter, "Batch ids reused with another body by app.") {
            $0.conflicts
        }
        family("pulsegate_app_forwarded_total", .counter, "Pulse batches the upstream accepted by app.") {
            $0.forwarded
        }
        family("pulsegate_app_dead_letters_total", .counter, "Pulse batches moved to dead letters by app.") {
            $0.deadLetters
        }
        out.family(
            "pulsegate_app_limited_total", .counter, "Requests refused with 429 by their app's own limits (appLimits).")
        for label in labels {
            for (reason, count) in counts[label]!.limited.sorted(by: { $0.key < $1.key }) {
                out.sample("pulsegate_app_limited_total", labels: ["app": label, "reason": reason], count)
            }
        }
        let outbox = outboxByLabel(byApp)
        let outboxLabels = Set(labels).union(outbox.keys).sorted()
        out.metric(
            "pulsegate_app_outbox_batches", .gauge, "Pulse batches waiting in the outbox by app.", label: "app",
            Dictionary(uniqueKeysWithValues: outboxLabels.map { ($0, outbox[$0]?.rows ?? 0) }))
        out.metric(
            "pulsegate_app_outbox_bytes", .gauge, "Payload bytes waiting in the outbox by app.", label: "app",
            Dictionary(uniqueKeysWithValues: outboxLabels.map { ($0, outbox[$0]?.bytes ?? 0) }))
    }
}

/// Why an intake request was refused, as a bounded metric label (the log line and the status page
/// carry the full message the response body gives).
enum RejectionReason: String, Sendable, CaseIterable {
    /// 400: a malformed header, body or record.
    case invalid
    /// 401: app key missing or wrong.
    case unauthorized
    /// 403: app not allowed.
    case forbidden
    /// 404: no such route.
    case notFound = "not_found"
    /// 405: wrong method.
    case methodNotAllowed = "method_not_allowed"
    /// 413: body too large.
    case tooLarge = "too_large"
    /// 415: unsupported Content-Type or Content-Encoding.
    case unsupportedMediaType = "unsupported_media_type"
    /// 429: outbox full (or another limit).
    case throttled
    /// 503: storage failing, memory budget exhausted, starting or draining.
    case unavailable
    /// 200 with `partialSuccess`: some records were dropped.
    case partial
    /// Any other status.
    case other

    /// The reason of a refusing status.
    init(status: Int) {
        switch status {
        case 400: self = .invalid
        case 401: self = .unauthorized
        case 403: self = .forbidden
        case 404: self = .notFound
        case 405: self = .methodNotAllowed
        case 413: self = .tooLarge
        case 415: self = .unsupportedMediaType
        case 429: self = .throttled
        case 503: self = .unavailable
        default: self = .other
        }
    }
}
