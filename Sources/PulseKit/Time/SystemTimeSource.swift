#if canImport(Glibc)
    import Glibc
#endif

/// The real clocks: `CLOCK_MONOTONIC` for ``now``, `CLOCK_REALTIME` for the wall clock.
///
/// ``sleep(until:)`` does not use `Task.sleep`: Dispatch arms its timers with absolute deadlines,
/// which a wall-clock faker such as libfaketime shifts by its offset (a `Task.sleep` of 250 ms
/// under `faketime -f -1h` sleeps an hour). Sleepers are instead woken by one timer thread that
/// waits in `poll(2)` with a *relative* timeout, so a wait lasts as long as it was meant to
/// whatever happens to the clocks.
public struct SystemTimeSource: TimeSource {
    /// The process's one system source (its timer thread starts with the first sleep).
    public static let shared = SystemTimeSource()

    /// Creates a source; every instance reads the same clocks and shares the one timer thread.
    public init() {}

    public var now: Duration {
        Self.reading(CLOCK_MONOTONIC)
    }

    public var wallClockMilliseconds: Int64 {
        PulseInstant(sinceOrigin: Self.reading(CLOCK_REALTIME)).milliseconds
    }

    public func sleep(until deadline: Duration) async throws {
        try await TimerThread.shared.sleep(until: deadline) { SystemTimeSource.shared.now }
    }

    /// The current reading of the system clock `clock` (`clock_gettime(2)`), to the nanosecond.
    static func reading(_ clock: clockid_t) -> Duration {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }
}
