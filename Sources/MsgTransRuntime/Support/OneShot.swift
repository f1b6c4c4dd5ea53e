import Synchronization

/// A value delivered exactly once to one waiting task; the first ``complete(_:)`` wins.
///
/// Completion can come from any thread (the event loop, a cancellation handler). The waiter
/// installs its continuation with ``install(_:)``; if the value is already there, the continuation
/// is resumed at once.
final class OneShot<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Value, Never>)
        case completed(Value)
        case delivered
    }

    private let state = Mutex<State>(.idle)

    init() {}

    /// Installs the waiter. Returns `false` if the value was already available; the continuation
    /// has then been resumed with it.
    func install(_ continuation: CheckedContinuation<Value, Never>) -> Bool {
        let early: Value? = state.withLock { state in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .completed(let value):
                state = .delivered
                return value
            case .waiting, .delivered:
                preconditionFailure("OneShot waited on twice")
            }
        }
        if let early {
            continuation.resume(returning: early)
            return false
        }
        return true
    }

    /// Completes with `value` unless already completed. Returns whether this call won; when it
    /// did, `onWin` runs before the waiter resumes.
    @discardableResult
    func complete(_ value: Value, onWin: () -> Void = {}) -> Bool {
        let outcome: (won: Bool, waiter: CheckedContinuation<Value, Never>?) = state.withLock { state in
            switch state {
            case .idle:
                state = .completed(value)
                return (true, nil)
            case .waiting(let continuation):
                state = .delivered
                return (true, continuation)
            case .completed, .delivered:
                return (false, nil)
            }
        }
        if outcome.won {
            onWin()
        }
        outcome.waiter?.resume(returning: value)
        return outcome.won
    }

    /// Whether a value has been supplied.
    var isCompleted: Bool {
        state.withLock { state in
            switch state {
            case .idle, .waiting: return false
            case .completed, .delivered: return true
            }
        }
    }
}
