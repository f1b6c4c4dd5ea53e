import Synchronization

/// The tasks sleeping on a ``TimeSource``, each until its deadline: the shared bookkeeping of the
/// system timer thread and of manual test clocks.
///
/// ``sleep(until:now:)`` suspends the caller unless its deadline has passed; ``wake(upTo:)``
/// resumes every sleeper whose deadline is at or before a time, earliest deadline first (ties in
/// the order they went to sleep). Cancelling a sleeping task resumes it with `CancellationError`.
///
/// ```swift
/// let sleepers = SleeperQueue()
/// // one task:  try await sleepers.sleep(until: .seconds(5)) { currentTime }
/// // another:   sleepers.wake(upTo: .seconds(5))
/// ```
package final class SleeperQueue: Sendable {
    private struct Sleeper {
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty queue.
    package init() {}

    /// Suspends until ``wake(upTo:)`` reaches `deadline`; returns at once when `now()` (read under
    /// the queue's lock, so a wake that moved time cannot be missed) is already at or past it.
    ///
    /// - Parameter registered: called with the deadline once the caller sleeps, before it can be
    ///   woken (the timer thread uses it to shorten its wait).
    package func sleep(
        until deadline: Duration, now: () -> Duration, registered: (Duration) -> Void = { _ in }
    ) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Immediate {
                    case ready
                    case cancelled
                }
                let immediate: Immediate? = state.withLock { state in
                    if deadline <= now() { return .ready }
                    if Task.isCancelled { return .cancelled }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                switch immediate {
                case .ready: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case nil: registered(deadline)
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Resumes every sleeper whose deadline is at or before `time`, earliest first; returns how many.
    @discardableResult
    package func wake(upTo time: Duration) -> Int {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let ids = state.sleepers.filter { $0.value.deadline <= time }
                .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }.map(\.key)
            return ids.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        for continuation in due { continuation.resume() }
        return due.count
    }

    /// The earliest deadline of a sleeping task, or `nil` when none sleeps.
    package var earliestDeadline: Duration? {
        state.withLock { $0.sleepers.values.map(\.deadline).min() }
    }

    /// The deadlines of the tasks sleeping now, earliest first.
    package var deadlines: [Duration] {
        state.withLock { $0.sleepers.values.map(\.deadline).sorted() }
    }
}
