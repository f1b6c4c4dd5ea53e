import Foundation
public import PulseKit

/// A source of wall-clock time in milliseconds since the Unix epoch, and optionally of a monotonic time
/// that every process on the machine shares.
///
/// Every decision that depends on time — sealing deadlines, backoff, `Retry-After`, batch age, leases,
/// `Apsio-Sent-At` — reads this clock, so tests drive the uploader with a clock they control.
///
/// The monotonic reading (`CLOCK_BOOTTIME` for ``system``: it counts suspend too, and is the same for every
/// process until the next boot) lets the queue notice that the wall clock stepped: the stored deadlines are
/// then moved by the step, so waits last as long as they were meant to (see ``QueueClockBase``).
///
/// The foreground loop (``Uploader/run()``) sleeps on the ``PulseClock`` it was made from (the system clock
/// for the closure initialisers), so a test that builds it from a manual clock wakes the loop by advancing
/// time instead of waiting.
///
/// ```swift
/// let frozen = UploaderClock { 1_700_000_000_000 }
/// ```
public struct UploaderClock: Sendable {
    private let now: @Sendable () -> Int64
    private let monotonic: (@Sendable () -> Int64)?
    /// What the foreground loop sleeps on.
    private let sleeper: PulseClock
    /// Which timeline the monotonic readings belong to (the boot id for ``system``): readings of two
    /// timelines are never compared.
    let timeline: String

    /// Creates a clock from a closure returning milliseconds since the Unix epoch, without a monotonic
    /// reading (stored deadlines are not moved when that clock steps).
    public init(_ nowMilliseconds: @escaping @Sendable () -> Int64) {
        self.now = nowMilliseconds
        self.monotonic = nil
        self.timeline = ""
        self.sleeper = .system
    }

    /// Creates a clock reading the wall time of `clock` and sleeping on it, without a monotonic reading
    /// (stored deadlines are not moved when its wall clock steps).
    public init(_ clock: PulseClock) {
        self.now = { clock.wallClockMilliseconds() }
        self.monotonic = nil
        self.timeline = ""
        self.sleeper = clock
    }

    /// Creates a clock reading the wall time of `clock` and sleeping on it, with its monotonic timeline as
    /// the monotonic reading, shared by every process on `timeline`.
    public init(_ clock: PulseClock, timeline: String) {
        self.now = { clock.wallClockMilliseconds() }
        self.monotonic = { clock.monotonicMilliseconds() }
        self.timeline = timeline
        self.sleeper = clock
    }

    /// Creates a clock from a wall-clock closure and a monotonic one (milliseconds from any origin, never
    /// going back, shared by every process on `timeline`).
    public init(
        _ nowMilliseconds: @escaping @Sendable () -> Int64, monotonicMilliseconds: @escaping @Sendable () -> Int64,
        timeline: String
    ) {
        self.now = nowMilliseconds
        self.monotonic = monotonicMilliseconds
        self.timeline = timeline
        self.sleeper = .system
    }

    /// Sleeps `milliseconds` on the clock this one was made from; throws `CancellationError` when the task
    /// is cancelled.
    func sleep(milliseconds: Int64) async throws {
        try await sleeper.sleep(for: .milliseconds(milliseconds))
    }

    /// The current time in milliseconds since the Unix epoch.
    public func nowMilliseconds() -> Int64 {
        now()
    }

    /// The monotonic time in milliseconds, if this clock has one.
    public func monotonicMilliseconds() -> Int64? {
        monotonic?()
    }

    /// The system's real-time clock, with `CLOCK_BOOTTIME` as its monotonic reading where the boot can be
    /// identified (`/proc/sys/kernel/random/boot_id`); elsewhere without one, since readings of processes
    /// that cannot tell whether they share a boot must not be compared.
    public static let system: UploaderClock = {
        let wall: @Sendable () -> Int64 = {
            var spec = timespec()
            clock_gettime(CLOCK_REALTIME, &spec)
            return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
        }
        guard let boot = bootIdentifier else { return UploaderClock(wall) }
        return UploaderClock(
            wall,
            monotonicMilliseconds: {
                var spec = timespec()
                clock_gettime(CLOCK_BOOTTIME, &spec)
                return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
            }, timeline: "boot:" + boot)
    }()

    /// `/proc/sys/kernel/random/boot_id` (a new value every boot), if the system has it.
    private static let bootIdentifier: String? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else {
            return nil
        }
        let trimmed = text.trimmingASCIIWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }()
}
