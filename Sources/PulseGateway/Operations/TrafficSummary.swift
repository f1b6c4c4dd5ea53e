import PulseKit
import Synchronization

/// What a newcomer watching `pulsegate serve` sees while batches flow: one `info` line every
/// ``intervalMilliseconds`` in which something happened, with the counts of that interval and the
/// outbox depth now, and nothing while the gateway is idle.
///
/// ```json
/// {"ts":"…","level":"info","msg":"traffic","accepted":"75","duplicates":"1","rejected":"2","forwarded":"75","outbox":"0"}
/// ```
///
/// `accepted` are HTTP batches newly stored, `duplicates` replays answered `Apsio-Duplicate`,
/// `rejected` requests refused or partly refused (each explained by its own `request refused`
/// line), `forwarded` Pulse batches the upstream accepted, `outbox` Pulse batches waiting. It also
/// keeps the last minute of samples for the status page's rates. Time is the injected monotonic
/// clock; ``tick()`` is called about once a second.
final class TrafficSummary: Sendable {
    /// The least time between two lines.
    static let intervalMilliseconds: Int64 = 5_000
    /// How far back rates look.
    static let rateWindowMilliseconds: Int64 = 60_000

    private struct State {
        var lastLoggedAt: Int64?
        var lastLogged = AppMetrics.Counts()
        var lastOutbox = 0
        /// (monotonic time, counts per label), oldest first.
        var samples: [(at: Int64, counts: [String: AppMetrics.Counts])] = []
    }

    private let logger: GatewayLogger
    private let clock: PulseClock
    private let apps: AppMetrics
    private let outboxDepth: @Sendable () -> Int
    private let state = Mutex(State())

    init(logger: GatewayLogger, clock: PulseClock, apps: AppMetrics, outboxDepth: @escaping @Sendable () -> Int) {
        self.logger = logger
        self.clock = clock
        self.apps = apps
        self.outboxDepth = outboxDepth
    }

    /// Samples the counters; logs a line when the interval has passed and something changed.
    func tick() {
        let now = clock.monotonicMilliseconds()
        let perLabel = apps.snapshot
        let totals = perLabel.values.reduce(AppMetrics.Counts(), +)
        let outbox = outboxDepth()
        let line = state.withLock { state -> [String: String]? in
            state.samples.append((now, perLabel))
            state.samples.removeAll { now - $0.at > Self.rateWindowMilliseconds }
            guard let last = state.lastLoggedAt else {
                // The first interval starts now and counts from zero: batches that came before the
                // first tick are in the first line.
                state.lastLoggedAt = now
                return nil
            }
            guard now - last >= Self.intervalMilliseconds else { return nil }
            let previous = state.lastLogged
            let changed = totals != previous || outbox != state.lastOutbox
            state.lastLoggedAt = now
            state.lastLogged = totals
            state.lastOutbox = outbox
            guard changed else { return nil }
            return [
                "accepted": String(totals.accepted - previous.accepted),
                "duplicates": String(totals.duplicates - previous.duplicates),
                "rejected": String(totals.rejected - previous.rejected),
                "forwarded": String(totals.forwarded - previous.forwarded), "outbox": String(outbox),
            ]
        }
        guard let line else { return }
        logger.info(
            "traffic",
            [
                "accepted": line["accepted"]!, "duplicates": line["duplicates"]!, "rejected": line["rejected"]!,
                "forwarded": line["forwarded"]!, "outbox": line["outbox"]!,
            ])
    }

    /// Per label: HTTP batches accepted and Pulse batches forwarded per second over the samples of
    /// the last minute (zero with fewer than two samples).
    func rates() -> [String: (accepted: Double, forwarded: Double)] {
        let samples = state.withLock { $0.samples }
        guard let first = samples.first, let last = samples.last, last.at > first.at else { return [:] }
        let seconds = Double(last.at - first.at) / 1000
        var rates: [String: (accepted: Double, forwarded: Double)] = [:]
        for (label, now) in last.counts {
            let then = first.counts[label] ?? AppMetrics.Counts()
            rates[label] = (
                Double(now.accepted - then.accepted) / seconds, Double(now.forwarded - then.forwarded) / seconds
            )
        }
        return rates
    }
}
