import Synchronization

/// A value delivered exactly once to one waiting task (or one callback); the first
/// ``complete(_:onWin:)`` wins.
///
/// Completion can come from any thread (the event loop, a cancellation handler). The waiter
/// installs its continuation with ``install(_:)`` (or a callback with ``install(callback:)``); if
/// the value is already there, it is delivered at once.
final class OneShot<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Value, Never>)
        /// A callback, run on the completing thread.
        case callback(@Sendable (Value) -> Void)
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
            case .waiting, .callback, .delivered:
                preconditionFailure("OneShot waited on twice")
            }
        }
        if let early {
            continuation.resume(returning: early)
            return false
        }
        return true
    }

    /// Installs a callback instead of a waiting task: it runs once, on the thread that completes
    /// (at once on this one if the value was already there).
    func install(callback: @escaping @Sendable (Value) -> Void) {
        let early: Value? = state.withLock { state in
            switch state {
            case .idle:
                state = .callback(callback)
                return nil
            case .completed(let value):
                state = .delivered
                return value
            case .waiting, .callback, .delivered:
                preconditionFailure("OneShot waited on twice")
            }
        }
        if let early { callback(early) }
    }

    /// Completes with `value` unless already completed. Returns whether this call won; when it
    /// did, `onWin` runs before the waiter resumes.
    @discardableResult
    func complete(_ value: Value, onWin: () -> Void = {}) -> Bool {
        let outcome: (won: Bool, waiter: CheckedContinuation<Value, Never>?, callback: (@Sendable (Value) -> Void)?) =
            state.withLock { state in
                switch state {
                case .idle:
                    state = .completed(value)
                    return (true, nil, nil)
                case .waiting(let continuation):
                    state = .delivered
                    return (true, continuation, nil)
                case .callback(let callback):
                    state = .delivered
                    return (true, nil, callback)
                case .completed, .delivered:
                    return (false, nil, nil)
                }
            }
        if outcome.won {
            onWin()
        }
        outcome.waiter?.resume(returning: value)
        outcome.callback?(value)
        return outcome.won
    }

    /// Whether a value has been supplied.
    var isCompleted: Bool {
        state.withLock { state in
            switch state {
            case .idle, .waiting, .callback: return false
            case .completed, .delivered: return true
            }
        }
    }
}
