/// Exponential backoff with full jitter: after attempt *n* fails, wait a uniformly random time in
/// `0…min(cap, base · 2^(n-1))`.
///
/// Full jitter spreads a fleet's retries evenly over the window instead of synchronising them.
struct Backoff: Sendable {
    var baseMilliseconds: Int64
    var capMilliseconds: Int64

    /// The ceiling after `attempts` failed attempts (≥ 1).
    func ceiling(attempts: Int) -> Int64 {
        let exponent = min(max(attempts, 1) - 1, 40)
        let (scaled, overflow) = baseMilliseconds.multipliedReportingOverflow(by: Int64(1) << Int64(exponent))
        return overflow ? capMilliseconds : min(capMilliseconds, scaled)
    }

    /// A jittered delay after `attempts` failed attempts.
    func delay(attempts: Int, random: RandomSource) -> Int64 {
        Int64(random.uniform(upTo: UInt64(ceiling(attempts: attempts))))
    }
}
