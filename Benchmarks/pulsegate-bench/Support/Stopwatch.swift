#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Times closures in thread CPU time, which other processes on a shared machine inflate less than
/// wall-clock time.
///
/// Comparisons are paired: each round times both sides back to back, so both see the same machine
/// load, and the speedup is the median of the per-round ratios. The reported times are each
/// side's best round (the least disturbed one).
enum Stopwatch {
    static let rounds = 15
    /// Approximate CPU time of one timed round of one side, in nanoseconds.
    static let roundTargetNanos: UInt64 = 30_000_000

    /// Keeps results observable so the optimizer cannot drop the measured work.
    nonisolated(unsafe) static var sink = 0

    /// The outcome of a paired comparison.
    struct Comparison {
        /// Best-round microseconds per call of the baseline and of the candidate.
        var baseline: Double
        var candidate: Double
        /// Median over rounds of baseline time / candidate time.
        var speedup: Double
    }

    /// Current CPU time of the calling thread, in nanoseconds.
    static func cpuNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Microseconds per call of `body` over `iterations` calls.
    static func micros(iterations: Int, _ body: () -> Int) -> Double {
        let start = cpuNanos()
        for _ in 0..<iterations { sink &+= body() }
        return Double(cpuNanos() - start) / 1_000 / Double(iterations)
    }

    /// Warms `body` up and returns how many calls fill one round.
    static func iterationsPerRound(_ body: () -> Int) -> Int {
        var iterations = 1
        while true {
            let perCall = micros(iterations: iterations, body)
            let elapsed = perCall * Double(iterations) * 1_000
            if elapsed >= Double(roundTargetNanos) / 4 || iterations >= 1 << 24 {
                return max(1, Int(Double(roundTargetNanos) / max(perCall * 1_000, 1)))
            }
            iterations *= 2
        }
    }

    /// Best-round microseconds per call of `body`.
    static func microsPerCall(_ body: () -> Int) -> Double {
        let iterations = iterationsPerRound(body)
        return (0..<rounds).map { _ in micros(iterations: iterations, body) }.min()!
    }

    /// Times `baseline` and `candidate` in alternating rounds.
    static func compare(baseline: () -> Int, candidate: () -> Int) -> Comparison {
        let baselineIterations = iterationsPerRound(baseline)
        let candidateIterations = iterationsPerRound(candidate)
        var baselineTimes: [Double] = []
        var candidateTimes: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<rounds {
            let b = micros(iterations: baselineIterations, baseline)
            let c = micros(iterations: candidateIterations, candidate)
            baselineTimes.append(b)
            candidateTimes.append(c)
            ratios.append(b / c)
        }
        ratios.sort()
        return Comparison(
            baseline: baselineTimes.min()!, candidate: candidateTimes.min()!, speedup: ratios[ratios.count / 2])
    }
}
