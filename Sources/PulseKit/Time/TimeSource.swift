/// What a ``PulseClock`` reads and waits on: a monotonic timeline, the wall clock, and a way to
/// sleep until a point on the timeline.
///
/// One value gives all three, so a component that takes a clock gets its persisted timestamps
/// (wall milliseconds) and its waits and timeouts (monotonic) from the same place, and a test that
/// injects a manual source controls both: its sleepers wake when the test advances time.
///
/// ```swift
/// let clock = PulseClock(SystemTimeSource.shared)
/// try await clock.sleep(for: .milliseconds(250))
/// ```
public protocol TimeSource: Sendable {
    /// Monotonic time since a fixed, arbitrary origin. Never goes backwards, and a step of the
    /// wall clock does not move it.
    var now: Duration { get }

    /// Wall-clock time, milliseconds since the Unix epoch (for timestamps that are stored or sent).
    var wallClockMilliseconds: Int64 { get }

    /// Suspends until ``now`` has reached `deadline` (at once when it already has).
    ///
    /// Throws `CancellationError` when the calling task is cancelled while it waits.
    func sleep(until deadline: Duration) async throws
}
