import PulseKit
import Synchronization

/// Tells the operator when the upstream stops taking batches and when it takes them again: one
/// `warning` line when sends start failing (unreachable, timing out, or answering with a retryable
/// refusal such as 429 or 5xx), one when a batch is accepted again, with the counts in between.
///
/// ```json
/// {"ts":"…","level":"warning","msg":"upstream failing; batches stay in the outbox","reason":"connection refused","failures":"1"}
/// {"ts":"…","level":"warning","msg":"upstream recovered","failures":"37","failingForMs":"61250","lastReason":"connection refused"}
/// ```
///
/// The individual failures stay at `debug` (`upstream send failed, will retry`). Time is the
/// injected monotonic clock.
final class UpstreamHealth: Sendable {
    private struct State {
        var failingSince: Int64?
        var failures = 0
        var lastReason = ""
        /// Episodes of failure since start.
        var outages = 0
    }

    /// What the status page shows.
    struct Snapshot: Sendable, Equatable {
        var failing: Bool
        /// Failures in the current episode.
        var failures: Int
        var lastReason: String
        var failingForMilliseconds: Int64
        var outages: Int
    }

    private let logger: GatewayLogger
    private let clock: PulseClock
    private let state = Mutex(State())

    init(logger: GatewayLogger, clock: PulseClock) {
        self.logger = logger
        self.clock = clock
    }

    /// A send failed in a way that will be retried.
    func failed(reason: String) {
        let now = clock.monotonicMilliseconds()
        let first = state.withLock { state -> Bool in
            state.failures += 1
            state.lastReason = reason
            guard state.failingSince == nil else { return false }
            state.failingSince = now
            state.outages += 1
            return true
        }
        if first {
            logger.warning("upstream failing; batches stay in the outbox", ["reason": reason, "failures": "1"])
        }
    }

    /// The upstream accepted a batch.
    func succeeded() {
        let now = clock.monotonicMilliseconds()
        let ended = state.withLock { state -> (failures: Int, since: Int64, reason: String)? in
            guard let since = state.failingSince else { return nil }
            defer {
                state.failingSince = nil
                state.failures = 0
            }
            return (state.failures, since, state.lastReason)
        }
        guard let ended else { return }
        logger.warning(
            "upstream recovered",
            [
                "failures": String(ended.failures), "failingForMs": String(max(0, now - ended.since)),
                "lastReason": ended.reason,
            ])
    }

    var snapshot: Snapshot {
        let now = clock.monotonicMilliseconds()
        return state.withLock { state in
            Snapshot(
                failing: state.failingSince != nil, failures: state.failures, lastReason: state.lastReason,
                failingForMilliseconds: state.failingSince.map { max(0, now - $0) } ?? 0, outages: state.outages)
        }
    }
}
