#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Times a closure in thread CPU time (so other processes on a shared machine inflate the numbers
/// less than wall-clock time would): warm up, then the best of several short timed rounds (the
/// least disturbed round; on a busy machine the median still drifts with other processes' load).
enum Stopwatch {
    static let rounds = 15
    /// Approximate CPU time of one timed round, in nanoseconds.
    static let roundTargetNanos: UInt64 = 40_000_000

    /// Keeps results observable so the optimizer cannot drop the measured work.
    nonisolated(unsafe) static var sink = 0

    /// Current CPU time of the calling thread, in nanoseconds.
    static func cpuNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    static func nanos(iterations: Int, _ body: () -> Int) -> UInt64 {
        let start = cpuNanos()
        for _ in 0..<iterations { sink &+= body() }
        return cpuNanos() - start
    }

    /// Best-round microseconds of CPU time per call of `body`.
    static func microsPerCall(_ body: () -> Int) -> Double {
        // Warm up and size a round.
        var iterations = 1
        while true {
            let elapsed = nanos(iterations: iterations, body)
            if elapsed >= roundTargetNanos / 4 || iterations >= 1 << 24 {
                iterations = max(1, Int(Double(iterations) * Double(roundTargetNanos) / Double(max(elapsed, 1))))
                break
            }
            iterations *= 2
        }
        var samples: [Double] = []
        for _ in 0..<rounds {
            samples.append(Double(nanos(iterations: iterations, body)) / 1_000 / Double(iterations))
        }
        return samples.min()!
    }
}
