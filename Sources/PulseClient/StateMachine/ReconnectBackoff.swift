/// Exponential backoff with full jitter plus a sliding-window cap on connection attempts.
///
/// Pure bookkeeping: time comes in as arguments, randomness from the injected generator, so every
/// outcome is reproducible in tests (see ``PulseReconnectPolicy`` for the rules).
struct ReconnectBackoff: Sendable {
    let policy: PulseReconnectPolicy
    private var random: RandomSource
    /// Consecutive failures since the last reset; the exponent of the next delay cap.
    private(set) var consecutiveFailures = 0
    /// Start times of the attempts still inside the window, oldest first.
    private(set) var attemptTimes: [Duration] = []

    init(policy: PulseReconnectPolicy, random: any RandomNumberGenerator & Sendable) {
        self.policy = policy
        self.random = RandomSource(base: random)
    }

    /// The upper bound of the next delay: `min(maxDelay, initialDelay × 2^consecutiveFailures)`.
    var currentCap: Duration {
        Self.cap(failures: consecutiveFailures, policy: policy)
    }

    /// `min(maxDelay, initialDelay × 2^failures)`, without overflowing.
    static func cap(failures: Int, policy: PulseReconnectPolicy) -> Duration {
        let limit = max(policy.maxDelay, .zero)
        var cap = max(policy.initialDelay, .zero)
        var doublings = 0
        while doublings < failures && cap < limit {
            cap = cap * 2
            doublings += 1
        }
        return min(cap, limit)
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

    /// A duration drawn uniformly from `[0, cap]` (nanosecond resolution).
    ///
    /// Multiply-shift instead of the standard library's rejection sampling: exactly one word is drawn
    /// per delay (the bias is below 2⁻²⁴ for caps up to hours), so a scripted generator maps its
    /// smallest word to 0 and its largest to `cap` without ever looping.
    mutating func jitter(upTo cap: Duration) -> Duration {
        let nanoseconds = Self.nanoseconds(cap)
        guard nanoseconds > 0 else { return .zero }
        let draw = random.next().multipliedFullWidth(by: nanoseconds + 1).high
        return .nanoseconds(Int64(draw))
    }

    /// Records that an attempt starts at `now`.
    mutating func recordAttempt(at now: Duration) {
        prune(now: now)
        attemptTimes.append(now)
    }

    /// The earliest time an attempt may start under the window cap, given the attempts recorded so
    /// far: `now` when fewer than ``PulseReconnectPolicy/maxAttemptsPerWindow`` started within the
    /// window ending at `now`, else the moment the oldest of them leaves the window.
    mutating func windowAllows(at now: Duration) -> Duration {
        prune(now: now)
        let limit = max(policy.maxAttemptsPerWindow, 1)
        guard attemptTimes.count >= limit else { return now }
        return attemptTimes[attemptTimes.count - limit] + policy.window
    }

    /// Drops attempts that are no longer inside the window ending at `now`.
    private mutating func prune(now: Duration) {
        let cutoff = now - policy.window
        if let keep = attemptTimes.firstIndex(where: { $0 > cutoff }) {
            attemptTimes.removeFirst(keep)
        } else {
            attemptTimes.removeAll()
        }
    }

    /// The non-negative length of `duration` in whole nanoseconds, saturating at `Int64.max`.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < 9_000_000_000 else { return UInt64(Int64.max) }
        return UInt64(seconds) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
    }
}

/// A concrete generator wrapping the injected existential one.
struct RandomSource: RandomNumberGenerator, Sendable {
    var base: any RandomNumberGenerator & Sendable

    mutating func next() -> UInt64 {
        base.next()
    }
}
