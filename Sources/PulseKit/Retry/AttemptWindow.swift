/// A sliding-window cap on attempts: at most `limit` attempts start within any `window`.
///
/// Pure bookkeeping — time comes in as arguments (monotonic, e.g. ``PulseClock/now``), so the
/// outcome is reproducible. Used with ``Backoff`` to bound connection attempts.
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

    /// Drops attempts that are no longer inside the window ending at `now`.
    private mutating func prune(now: Duration) {
        let cutoff = now - window
        if let keep = starts.firstIndex(where: { $0 > cutoff }) {
            starts.removeFirst(keep)
        } else {
            starts.removeAll()
        }
    }
}
