/// A point on a ``PulseClock``'s monotonic timeline: the time since the source's origin.
public struct PulseInstant: InstantProtocol, Sendable, Hashable, Comparable {
    /// Time since the origin of the clock's ``TimeSource``.
    public var sinceOrigin: Duration

    /// Creates the instant `sinceOrigin` after the source's origin.
    public init(sinceOrigin: Duration) {
        self.sinceOrigin = sinceOrigin
    }

    /// Whole milliseconds since the origin (rounded down), for code that keeps deadlines as
    /// integers.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = sinceOrigin.components
        let fraction = attoseconds / 1_000_000_000_000_000
        let floored = attoseconds < 0 && attoseconds % 1_000_000_000_000_000 != 0 ? fraction - 1 : fraction
        return seconds &* 1000 &+ floored
    }

    /// The instant `duration` later (earlier when negative).
    public func advanced(by duration: Duration) -> PulseInstant {
        PulseInstant(sinceOrigin: sinceOrigin + duration)
    }

    /// The time from this instant to `other` (negative when `other` is earlier).
    public func duration(to other: PulseInstant) -> Duration {
        other.sinceOrigin - sinceOrigin
    }

    public static func < (lhs: PulseInstant, rhs: PulseInstant) -> Bool {
        lhs.sinceOrigin < rhs.sinceOrigin
    }
}

/// The one clock of PulseGate: a standard `Clock` on a monotonic timeline that also reads the wall
/// clock, backed by an injected ``TimeSource``.
///
/// Components take a `PulseClock` and use ``now`` (or ``monotonicMilliseconds()``) for durations,
/// timeouts and in-process waits, ``wallClockMilliseconds()`` for timestamps that are stored or
/// sent, and `sleep(until:)` / `sleep(for:)` to wait. Production passes ``system``; tests pass a
/// manual source and advance it, which wakes the sleepers — no test waits in real time.
///
/// ```swift
/// let clock = PulseClock.system
/// let deadline = clock.now.advanced(by: .seconds(5))
/// try await clock.sleep(until: deadline)
/// let stamp = clock.wallClockMilliseconds()
/// ```
public struct PulseClock: Clock, Sendable {
    public typealias Instant = PulseInstant
    public typealias Duration = Swift.Duration

    /// Where this clock reads time and sleeps.
    public let source: any TimeSource

    /// Creates a clock over `source`.
    public init(_ source: any TimeSource) {
        self.source = source
    }

    /// The system clocks: `CLOCK_MONOTONIC`, `CLOCK_REALTIME`, and a sleep that a wall-clock
    /// faker does not stretch (see ``SystemTimeSource``).
    public static let system = PulseClock(SystemTimeSource.shared)

    /// The current monotonic instant.
    public var now: PulseInstant { PulseInstant(sinceOrigin: source.now) }

    /// One nanosecond: instants carry `Duration`'s resolution.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until ``now`` reaches `deadline`; `tolerance` is ignored. Throws
    /// `CancellationError` when the task is cancelled.
    public func sleep(until deadline: PulseInstant, tolerance: Duration? = nil) async throws {
        try await source.sleep(until: deadline.sinceOrigin)
    }

    /// Wall-clock time in milliseconds since the Unix epoch.
    public func wallClockMilliseconds() -> Int64 {
        source.wallClockMilliseconds
    }

    /// Monotonic time in whole milliseconds since the source's origin.
    public func monotonicMilliseconds() -> Int64 {
        now.milliseconds
    }
}
