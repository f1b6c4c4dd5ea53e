import PulseClient
import Synchronization

/// A clock that only moves when the test advances it. Sleepers wake when `now` reaches their deadline.
final class ManualClock: PulseClientClock {
    private struct Sleeper {
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var wallClockMilliseconds: Int64 = 1_700_000_000_000
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
    }

    private let state = Mutex(State())

    var now: Duration { state.withLock { $0.now } }

    var wallClockMilliseconds: Int64 { state.withLock { $0.wallClockMilliseconds } }

    func sleep(until deadline: Duration) async throws {
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
                    if deadline <= state.now { return .ready }
                    if Task.isCancelled { return .cancelled }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                switch immediate {
                case .ready: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The deadlines of the tasks sleeping now, earliest first.
    var sleeperDeadlines: [Duration] {
        state.withLock { $0.sleepers.values.map(\.deadline).sorted() }
    }

    /// Moves time forward by `duration` and wakes every sleeper that is due.
    func advance(by duration: Duration) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            state.now += duration
            state.wallClockMilliseconds += Int64(duration.components.seconds) * 1000
            let now = state.now
            let ids = state.sleepers.filter { $0.value.deadline <= now }.map(\.key)
            return ids.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        for continuation in due {
            continuation.resume()
        }
    }

    /// Moves time forward to `time` (no-op when already past it).
    func advance(to time: Duration) {
        let delta = time - now
        if delta > .zero {
            advance(by: delta)
        }
    }
}
