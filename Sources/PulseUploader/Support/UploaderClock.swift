import Foundation

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// Every decision that depends on time — sealing deadlines, backoff, `Retry-After`, batch age, leases,
/// `Apsio-Sent-At` — reads this clock, so tests drive the uploader with a clock they control.
///
/// ```swift
/// let frozen = UploaderClock { 1_700_000_000_000 }
/// ```
public struct UploaderClock: Sendable {
    private let now: @Sendable () -> Int64

    /// Creates a clock from a closure returning milliseconds since the Unix epoch.
    public init(_ nowMilliseconds: @escaping @Sendable () -> Int64) {
        self.now = nowMilliseconds
    }

    /// The current time in milliseconds since the Unix epoch.
    public func nowMilliseconds() -> Int64 {
        now()
    }

    /// The system's real-time clock.
    public static let system = UploaderClock {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
