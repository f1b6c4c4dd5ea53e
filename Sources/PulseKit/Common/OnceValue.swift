import Synchronization

/// A value that is set once and that any number of tasks await: why a connection closed, that an
/// event loop or a listener has stopped (`OnceValue<Void>`).
///
/// ``wait()`` returns at once when the value is set, else suspends until ``set(_:)`` sets it. Only
/// the first ``set(_:)`` counts; later calls change nothing. Safe from any thread.
package final class OnceValue<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = Mutex(State())

    /// A value not set yet.
    package init() {}

    /// The value, or `nil` while it is not set.
    package var value: Value? {
        state.withLock { $0.value }
    }

    /// Sets the value and resumes every waiter with it; returns `false` (changing nothing) when it
    /// was already set.
    @discardableResult
    package func set(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters {
            waiter.resume(returning: value)
        }
        return true
    }

    /// The value, once it is set.
    package func wait() async -> Value {
        await wait(ifPending: {})
    }

    /// The value, once it is set; `ifPending` runs (on the caller, after this waiter is counted)
    /// when the value is not set yet, to start what will set it.
    package func wait(ifPending: () -> Void) async -> Value {
        await withCheckedContinuation { continuation in
            let value = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let value {
                continuation.resume(returning: value)
            } else {
                ifPending()
            }
        }
    }
}
