#if canImport(Glibc)
    import Glibc
#endif

/// The time source of a ``PulseClientSession``: a monotonic clock for heartbeats, backoff and the
/// attempt window, and the wall clock for `clientTimeMs`.
///
/// Inject a manual implementation to drive a session's timers deterministically in tests.
public protocol PulseClientClock: Sendable {
    /// Monotonic time since a fixed, arbitrary origin. Never goes backwards.
    var now: Duration { get }
    /// Wall-clock time, milliseconds since the Unix epoch.
    var wallClockMilliseconds: Int64 { get }
    /// Suspends until ``now`` has reached `deadline`. Throws `CancellationError` when the calling
    /// task is cancelled.
    func sleep(until deadline: Duration) async throws
}

/// The real clocks: `ContinuousClock` for monotonic time and `CLOCK_REALTIME` for wall time.
public struct PulseSystemClock: PulseClientClock {
    private let origin: ContinuousClock.Instant

    /// Creates a clock whose origin is the moment of creation.
    public init() {
        origin = ContinuousClock.now
    }

    public var now: Duration { ContinuousClock.now - origin }

    public var wallClockMilliseconds: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    public func sleep(until deadline: Duration) async throws {
        try await Task.sleep(until: origin + deadline, clock: .continuous)
    }
}
