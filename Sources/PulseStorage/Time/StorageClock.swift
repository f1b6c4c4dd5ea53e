import Foundation

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// Injected wherever storage records or compares times (migration timestamps, expiry pruning), so tests can
/// use a fixed or stepping clock instead of the system time.
///
/// ```swift
/// let frozen = StorageClock { 1_700_000_000_000 }
/// ```
package struct StorageClock: Sendable {
    private let now: @Sendable () -> Int64

    /// Creates a clock from a closure returning milliseconds since the Unix epoch.
    package init(_ nowMilliseconds: @escaping @Sendable () -> Int64) {
        self.now = nowMilliseconds
    }

    /// The current time in milliseconds since the Unix epoch.
    package func nowMilliseconds() -> Int64 {
        now()
    }

    /// The system's real-time clock.
    package static let system = StorageClock {
        Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down))
    }
}
