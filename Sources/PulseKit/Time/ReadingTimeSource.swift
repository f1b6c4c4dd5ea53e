import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A ``TimeSource`` over two readings — a monotonic timeline and the wall clock — that waits in
/// relative time on the ``SystemTimeSource`` timer thread.
///
/// For timelines the system source does not read: ``bootTime`` (`CLOCK_BOOTTIME`), or readings a
/// caller supplies. ``sleep(until:)`` waits as long as the deadline was ahead of the timeline when
/// the sleep began, so it suits a timeline that runs at least at real speed: `CLOCK_BOOTTIME` is
/// `CLOCK_MONOTONIC` plus the time the machine was suspended.
///
/// ```swift
/// let clock = PulseClock.bootTime               // CLOCK_BOOTTIME and CLOCK_REALTIME
/// let reading = clock.monotonicMilliseconds()   // comparable across processes of this boot
/// ```
package struct ReadingTimeSource: TimeSource {
    private let monotonic: @Sendable () -> Duration
    private let wall: @Sendable () -> Int64

    /// Creates a source reading `monotonic` (never going back) for ``now`` and
    /// `wallClockMilliseconds` (epoch milliseconds) for the wall clock.
    package init(
        monotonic: @escaping @Sendable () -> Duration, wallClockMilliseconds: @escaping @Sendable () -> Int64
    ) {
        self.monotonic = monotonic
        self.wall = wallClockMilliseconds
    }

    /// `CLOCK_BOOTTIME` for the monotonic timeline — it counts suspend too, and every process of the
    /// machine reads the same value until the next boot (see ``bootIdentifier``) — and
    /// `CLOCK_REALTIME` for the wall clock.
    package static let bootTime = ReadingTimeSource(
        monotonic: { SystemTimeSource.reading(CLOCK_BOOTTIME) },
        wallClockMilliseconds: { SystemTimeSource.shared.wallClockMilliseconds })

    /// The boot's identity, `/proc/sys/kernel/random/boot_id` (a new value every boot), or `nil`
    /// where the system has none: ``bootTime`` readings of two processes are comparable only when
    /// their boot identifiers are equal.
    package static let bootIdentifier: String? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else {
            return nil
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }()

    package var now: Duration { monotonic() }

    package var wallClockMilliseconds: Int64 { wall() }

    /// Sleeps on the system timer thread for as long as `deadline` is ahead of ``now``.
    package func sleep(until deadline: Duration) async throws {
        let remaining = deadline - now
        guard remaining > .zero else { return }
        let system = SystemTimeSource.shared
        try await system.sleep(until: system.now + remaining)
    }
}

extension PulseClock {
    /// The clock over ``ReadingTimeSource/bootTime``: `CLOCK_BOOTTIME` as its monotonic timeline,
    /// shared by every process of one boot, and `CLOCK_REALTIME`.
    package static let bootTime = PulseClock(ReadingTimeSource.bootTime)
}
