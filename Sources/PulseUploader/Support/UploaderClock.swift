public import PulseKit

/// A source of wall-clock time in milliseconds since the Unix epoch, and optionally of a monotonic time
/// that every process on the machine shares: the uploader's public face of a ``PulseClock``.
///
/// Every decision that depends on time — sealing deadlines, backoff, `Retry-After`, batch age, leases,
/// `Apsio-Sent-At` — reads this clock, so tests drive the uploader with a clock they control.
///
/// The monotonic reading (for ``system`` the `CLOCK_BOOTTIME` timeline of PulseKit's boot-time clock: it
/// counts suspend too, and is the same for every process until the next boot) lets the queue notice that
/// the wall clock stepped: the stored deadlines are then moved by the step, so waits last as long as they
/// were meant to (see ``QueueClockBase``).
///
/// The foreground loop (``Uploader/run()``) sleeps on the ``PulseClock`` it was made from (the system clock
/// for the closure initialisers), so a test that builds it from a manual clock wakes the loop by advancing
/// time instead of waiting.
///
/// ```swift
/// let frozen = UploaderClock { 1_700_000_000_000 }
/// ```
public struct UploaderClock: Sendable {
    /// What the uploader reads and sleeps on.
    let clock: PulseClock
    /// Whether ``clock``'s monotonic timeline is the monotonic reading (shared by every process on
    /// ``timeline``).
    private let sharesMonotonic: Bool
    /// Which timeline the monotonic readings belong to (the boot id for ``system``): readings of two
    /// timelines are never compared.
    let timeline: String

    private init(clock: PulseClock, timeline: String?) {
        self.clock = clock
        self.sharesMonotonic = timeline != nil
        self.timeline = timeline ?? ""
    }

    /// Creates a clock from a closure returning milliseconds since the Unix epoch, without a monotonic
    /// reading (stored deadlines are not moved when that clock steps).
    public init(_ nowMilliseconds: @escaping @Sendable () -> Int64) {
        let source = ReadingTimeSource(
            monotonic: { SystemTimeSource.shared.now }, wallClockMilliseconds: nowMilliseconds)
        self.init(clock: PulseClock(source), timeline: nil)
    }

    /// Creates a clock reading the wall time of `clock` and sleeping on it, without a monotonic reading
    /// (stored deadlines are not moved when its wall clock steps).
    public init(_ clock: PulseClock) {
        self.init(clock: clock, timeline: nil)
    }

    /// Creates a clock reading the wall time of `clock` and sleeping on it, with its monotonic timeline as
    /// the monotonic reading, shared by every process on `timeline`.
    public init(_ clock: PulseClock, timeline: String) {
        self.init(clock: clock, timeline: .some(timeline))
    }

    /// Creates a clock from a wall-clock closure and a monotonic one (milliseconds from any origin, never
    /// going back, shared by every process on `timeline`).
    public init(
        _ nowMilliseconds: @escaping @Sendable () -> Int64, monotonicMilliseconds: @escaping @Sendable () -> Int64,
        timeline: String
    ) {
        let source = ReadingTimeSource(
            monotonic: { .milliseconds(monotonicMilliseconds()) }, wallClockMilliseconds: nowMilliseconds)
        self.init(clock: PulseClock(source), timeline: .some(timeline))
    }

    /// Sleeps `milliseconds` on the clock this one was made from; throws `CancellationError` when the task
    /// is cancelled.
    func sleep(milliseconds: Int64) async throws {
        try await clock.sleep(for: .milliseconds(milliseconds))
    }

    /// The current time in milliseconds since the Unix epoch.
    public func nowMilliseconds() -> Int64 {
        clock.wallClockMilliseconds()
    }

    /// The monotonic time in milliseconds, if this clock has one.
    public func monotonicMilliseconds() -> Int64? {
        sharesMonotonic ? clock.monotonicMilliseconds() : nil
    }

    /// The system's real-time clock, with `CLOCK_BOOTTIME` as its monotonic reading where the boot can be
    /// identified (`/proc/sys/kernel/random/boot_id`); elsewhere without one, since readings of processes
    /// that cannot tell whether they share a boot must not be compared.
    public static let system: UploaderClock =
        if let boot = ReadingTimeSource.bootIdentifier {
            UploaderClock(.bootTime, timeline: "boot:" + boot)
        } else {
            UploaderClock(.system)
        }
}
