import PulseKit

/// Exponential backoff with full jitter plus a sliding-window cap on connection attempts: PulseKit's
/// ``Backoff`` and ``AttemptWindow`` with the session's failure count.
///
/// Pure bookkeeping: time comes in as arguments, randomness from the injected source, so every
/// outcome is reproducible in tests (see ``PulseReconnectPolicy`` for the rules).
struct ReconnectBackoff: Sendable {
    let policy: PulseReconnectPolicy
    private let random: RandomSource
    /// Consecutive failures since the last reset; the exponent of the next delay cap.
    private(set) var consecutiveFailures = 0
    /// The attempts still inside the window.
    private var window: AttemptWindow

    init(policy: PulseReconnectPolicy, random: RandomSource) {
        self.policy = policy
        self.random = random
        self.window = AttemptWindow(limit: policy.maxAttemptsPerWindow, window: policy.window)
    }

    /// Start times of the attempts still inside the window, oldest first.
    var attemptTimes: [Duration] { window.starts }

    /// The upper bound of the next delay: `min(maxDelay, initialDelay × 2^consecutiveFailures)`.
    var currentCap: Duration {
        Self.cap(failures: consecutiveFailures, policy: policy)
    }

    /// `min(maxDelay, initialDelay × 2^failures)` (whole milliseconds), without overflowing.
    static func cap(failures: Int, policy: PulseReconnectPolicy) -> Duration {
        Backoff(base: policy.initialDelay, cap: policy.maxDelay).ceiling(failures: failures + 1)
    }

    /// Records a failure and returns the delay before the next attempt, uniform in `[0, cap]` where
    /// `cap` is ``currentCap`` before the failure was counted.
    mutating func failureDelay() -> Duration {
        let cap = currentCap
        consecutiveFailures += 1
        return jitter(upTo: cap)
    }

    /// Forgets earlier failures: the next delay cap is ``PulseReconnectPolicy/initialDelay`` again.
    mutating func reset() {
        consecutiveFailures = 0
    }

    /// A duration drawn uniformly from `[0, cap]` (millisecond resolution, one draw: the smallest
    /// word gives 0, the largest `cap`; see ``RandomSource/uniform(upTo:)``).
    func jitter(upTo cap: Duration) -> Duration {
        .milliseconds(Int64(random.uniform(upTo: UInt64(max(0, Backoff.milliseconds(cap))))))
    }

    /// Records that an attempt starts at `now`.
    mutating func recordAttempt(at now: Duration) {
        window.record(at: now)
    }

    /// The earliest time an attempt may start under the window cap, given the attempts recorded so
    /// far: `now` when fewer than ``PulseReconnectPolicy/maxAttemptsPerWindow`` started within the
    /// window ending at `now`, else the moment the oldest of them leaves the window.
    mutating func windowAllows(at now: Duration) -> Duration {
        window.earliestStart(at: now)
    }
}
