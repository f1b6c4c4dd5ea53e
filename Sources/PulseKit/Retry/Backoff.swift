/// The one retry backoff: exponential with full jitter and a cap.
///
/// After the *n*-th consecutive failure (n ≥ 1) the ceiling is `min(cap, base × 2^(n-1))` and the
/// delay is drawn uniformly from `0 ... ceiling` (one draw from the injected ``RandomSource``,
/// millisecond resolution). Full jitter spreads a fleet's retries evenly over the window instead of
/// synchronising them; the cap bounds the wait however long the outage.
///
/// Ceilings for `base` = 1 s, `cap` = 60 s (the gateway forwarder's defaults):
///
/// | failures | ceiling | delay drawn from |
/// |---------:|--------:|------------------|
/// | 1        | 1 s     | 0 … 1 s          |
/// | 2        | 2 s     | 0 … 2 s          |
/// | 3        | 4 s     | 0 … 4 s          |
/// | 4        | 8 s     | 0 … 8 s          |
/// | 5        | 16 s    | 0 … 16 s         |
/// | 6        | 32 s    | 0 … 32 s         |
/// | 7 and on | 60 s    | 0 … 60 s         |
///
/// A zero or negative `base` or `cap` gives no delay; a huge failure count saturates at the cap.
/// Connection attempts are additionally bounded by an ``AttemptWindow``.
///
/// ```swift
/// let backoff = Backoff(base: .seconds(1), cap: .seconds(60))
/// let wait = backoff.delay(failures: 3, random: .system)  // 0 ... 4 s
/// ```
package struct Backoff: Sendable, Hashable {
    /// The ceiling after the first failure.
    package var base: Duration
    /// The largest ceiling.
    package var cap: Duration

    /// Creates a backoff doubling from `base` up to `cap`.
    package init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = cap
    }

    /// `min(cap, base × 2^(failures-1))` in milliseconds (failures below 1 count as 1), without
    /// overflowing.
    package func ceilingMilliseconds(failures: Int) -> Int64 {
        let base = max(0, Self.milliseconds(base))
        let cap = max(0, Self.milliseconds(cap))
        let exponent = min(max(failures, 1) - 1, 62)
        let (scaled, overflow) = base.multipliedReportingOverflow(by: Int64(1) << Int64(exponent))
        return overflow ? cap : min(cap, scaled)
    }

    /// The ceiling after `failures` consecutive failures.
    package func ceiling(failures: Int) -> Duration {
        .milliseconds(ceilingMilliseconds(failures: failures))
    }

    /// A delay in milliseconds drawn uniformly from `0 ... ceiling(failures:)`.
    package func delayMilliseconds(failures: Int, random: RandomSource) -> Int64 {
        Int64(random.uniform(upTo: UInt64(ceilingMilliseconds(failures: failures))))
    }

    /// A delay drawn uniformly from `0 ... ceiling(failures:)`.
    package func delay(failures: Int, random: RandomSource) -> Duration {
        .milliseconds(delayMilliseconds(failures: failures, random: random))
    }

    /// Whole milliseconds of `duration` (rounded down), saturating.
    package static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        return scaled &+ attoseconds / 1_000_000_000_000_000
    }
}
