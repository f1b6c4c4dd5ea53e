import PulseKit
import Synchronization

/// A level-triggered wake-up for one waiting task: ``signal()`` makes the current or next
/// ``wait(upTo:)`` return at once; otherwise `wait` returns once the timeout has passed on the
/// injected clock.
///
/// The timeout is a sleep on the gateway's ``PulseClock``: in production its system source, whose
/// timer thread keeps a relative `poll(2)` timeout so a wall-clock faker such as libfaketime does
/// not stretch the forwarder's 250 ms tick; in tests a manual clock, so advancing it wakes the
/// scheduler at once instead of the test waiting in real time.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let clock: PulseClock
    private let state = Mutex(State())

    init(clock: PulseClock) {
        self.clock = clock
    }

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

    /// Returns when signalled, or after `timeout` on the clock.
    func wait(upTo timeout: Duration) async {
        if state.withLock({ state in
            defer { state.pending = false }
            return state.pending
        }) {
            return
        }
        let deadline = clock.now.advanced(by: timeout)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.signalled() }
            group.addTask { [clock] in try? await clock.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next signal (or a pending one), or when the task is cancelled.
    private func signalled() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
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

    /// Takes a permit if one is free now (never waits).
    func tryAcquire() -> Bool {
        state.withLock { state in
            guard state.available > 0 else { return false }
            state.available -= 1
            return true
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
