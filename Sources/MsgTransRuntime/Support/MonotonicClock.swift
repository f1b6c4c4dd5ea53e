#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic time in nanoseconds, the unit of every deadline in this module.
enum MonotonicClock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// `now() + duration`, saturating; negative durations count as zero.
    static func deadline(after duration: Duration) -> UInt64 {
        let (sum, overflow) = now().addingReportingOverflow(nanoseconds(duration))
        return overflow ? UInt64.max : sum
    }

    /// The non-negative length of `duration` in nanoseconds, saturating.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let components = duration.components
        guard components.seconds >= 0 else { return 0 }
        let seconds = UInt64(components.seconds)
        guard seconds < 18_000_000_000 else { return UInt64.max }
        return seconds * 1_000_000_000 + UInt64(max(0, components.attoseconds) / 1_000_000_000)
    }
}
