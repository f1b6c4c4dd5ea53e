import Synchronization

/// A level-triggered wake-up for one waiting task: ``signal()`` makes the current or next
/// ``wait(upTo:)`` return at once; otherwise `wait` returns after the timeout.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when signalled, or after `timeout`.
    func wait(upTo timeout: Duration) async {
        let generation = state.withLock { state -> Int? in
            if state.pending {
                state.pending = false
                return nil
            }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.expire(generation)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending || state.generation != generation {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }

    private func expire(_ generation: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else {
                if state.generation == generation { state.generation += 1 }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}

/// An async counting semaphore (the global in-flight bound).
final class AsyncLimiter: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ permits: Int) {
        state = Mutex(State(available: permits))
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.available += 1
            return nil
        }
        waiter?.resume()
    }
}
