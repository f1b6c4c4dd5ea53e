import Synchronization

/// A value published once to any number of waiters, each of which may give up when its task is
/// cancelled. Used for the outcome of a connection attempt and for the session closing.
final class Broadcast<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Value?, Never>] = [:]
    }

    private let state = Mutex(State())

    /// The published value, if any.
    var value: Value? {
        state.withLock { $0.value }
    }

    /// Publishes `value` and wakes every waiter. Only the first call has an effect.
    @discardableResult
    func complete(_ value: Value) -> Bool {
        let waiters: [CheckedContinuation<Value?, Never>]? = state.withLock { state in
            guard state.value == nil else { return nil }
            state.value = value
            let waiters = Array(state.waiters.values)
            state.waiters = [:]
            return waiters
        }
        guard let waiters else { return false }
        for waiter in waiters {
            waiter.resume(returning: value)
        }
        return true
    }

    /// Waits for the value; returns `nil` if the calling task is cancelled first.
    func wait() async -> Value? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let ready: Value?? = state.withLock { state in
                    if let value = state.value {
                        return .some(value)
                    }
                    if Task.isCancelled {
                        return .some(nil)
                    }
                    state.waiters[id] = continuation
                    return .none
                }
                if let ready {
                    continuation.resume(returning: ready)
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}
