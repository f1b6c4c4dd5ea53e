/// A sliding-window cap on attempts: at most `limit` attempts start within any `window`.
///
/// Pure bookkeeping — time comes in as arguments (monotonic, e.g. ``PulseClock/now``), so the
/// outcome is reproducible. Used with ``Backoff`` to bound connection attempts.
///
/// An attempt that turned out not to count (a connection that proved healthy and was closed on
/// purpose) is taken back with ``takeBackLatest()`` or ``takeBack(startedAt:)``. Attempts recorded
/// at a time after `now` — the clock stepped back, as a faked monotonic clock can — are forgotten
/// whenever the window is consulted, so a step back never blocks attempts for the step's length.
///
/// ```swift
/// var attempts = AttemptWindow(limit: 3, window: .seconds(10))
/// let start = attempts.earliestStart(at: now)   // `now` while fewer than 3 started in 10 s
/// attempts.record(at: start)
/// ```
package struct AttemptWindow: Sendable, Hashable {
    /// Most attempts allowed within one window (values below 1 count as 1).
    package var limit: Int
    /// The window's length.
    package var window: Duration
    /// Start times of the attempts still inside the window, oldest first.
    package private(set) var starts: [Duration] = []

    /// Creates an empty window.
    package init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Records that an attempt starts at `now`.
    package mutating func record(at now: Duration) {
        prune(now: now)
        starts.append(now)
    }

    /// The earliest time an attempt may start: `now` when fewer than ``limit`` started within the
    /// window ending at `now`, else the moment the oldest of the last ``limit`` leaves the window.
    package mutating func earliestStart(at now: Duration) -> Duration {
        prune(now: now)
        let limit = max(self.limit, 1)
        guard starts.count >= limit else { return now }
        return starts[starts.count - limit] + window
    }

    /// Takes the latest attempt back out of the window (it does not count); returns its start, or
    /// `nil` when no attempt is inside the window.
    @discardableResult
    package mutating func takeBackLatest() -> Duration? {
        starts.popLast()
    }

    /// Takes the latest attempt that started at `start` back out of the window; `false` when none
    /// is inside it.
    @discardableResult
    package mutating func takeBack(startedAt start: Duration) -> Bool {
        guard let index = starts.lastIndex(of: start) else { return false }
        starts.remove(at: index)
        return true
    }

    /// Drops the attempts that are no longer inside the window ending at `now`: those that left it,
    /// and those recorded after `now` (the clock stepped back).
    package mutating func prune(now: Duration) {
        if let last = starts.last, last > now {
            starts.removeSubrange((starts.lastIndex { $0 <= now }.map { $0 + 1 } ?? 0)...)
        }
        let cutoff = now - window
        if let keep = starts.firstIndex(where: { $0 > cutoff }) {
            starts.removeFirst(keep)
        } else {
            starts.removeAll()
        }
    }
}
