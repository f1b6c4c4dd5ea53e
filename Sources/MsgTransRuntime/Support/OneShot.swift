import Synchronization

/// A value delivered exactly once to one waiting task (or one callback); the first
/// ``complete(_:onWin:)`` wins.
///
/// Completion can come from any thread (the event loop, a cancellation handler). The waiter
/// installs its continuation with ``install(_:)`` (or a callback with ``install(callback:)``); if
/// the value is already there, it is delivered at once.
final class OneShot<Value: Sendable>: Sendable {
    /// Who takes the value: a waiting task or a callback, run on the completing thread.
    private enum Waiter {
        case task(CheckedContinuation<Value, Never>)
        case callback(@Sendable (Value) -> Void)

        func deliver(_ value: Value) {
            switch self {
            case .task(let continuation): continuation.resume(returning: value)
            case .callback(let callback): callback(value)
            }
        }
    }

    private enum State {
        case idle
        case waiting(Waiter)
        case completed(Value)
        case delivered
    }

    private let state = Mutex<State>(.idle)

    init() {}

    /// Installs the waiter. Returns `false` if the value was already available; the continuation
    /// has then been resumed with it.
    func install(_ continuation: CheckedContinuation<Value, Never>) -> Bool {
        install(.task(continuation))
    }

    /// Installs a callback instead of a waiting task: it runs once, on the thread that completes
    /// (at once on this one if the value was already there).
    func install(callback: @escaping @Sendable (Value) -> Void) {
        _ = install(.callback(callback))
    }

    /// Installs `waiter`, or delivers to it at once (and returns `false`) when the value is there.
    private func install(_ waiter: Waiter) -> Bool {
        let early: Value? = state.withLock { state in
            switch state {
            case .idle:
                state = .waiting(waiter)
                return nil
            case .completed(let value):
                state = .delivered
                return value
            case .waiting, .delivered:
                preconditionFailure("OneShot waited on twice")
            }
        }
        guard let early else { return true }
        waiter.deliver(early)
        return false
    }

    /// Completes with `value` unless already completed. Returns whether this call won; when it
    /// did, `onWin` runs before the waiter resumes.
    @discardableResult
    func complete(_ value: Value, onWin: () -> Void = {}) -> Bool {
        let outcome: (won: Bool, waiter: Waiter?) = state.withLock { state in
            switch state {
            case .idle:
                state = .completed(value)
                return (true, nil)
            case .waiting(let waiter):
                state = .delivered
                return (true, waiter)
            case .completed, .delivered:
                return (false, nil)
            }
        }
        if outcome.won {
            onWin()
        }
        outcome.waiter?.deliver(value)
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
