import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A level-triggered wake-up for one waiting task: ``signal()`` makes the current or next
/// ``wait(upTo:)`` return at once; otherwise `wait` returns after the timeout.
///
/// The timeout is kept by a small thread of its own that sleeps in `poll(2)` with a *relative*
/// timeout on `CLOCK_MONOTONIC`, not by `Task.sleep`: Dispatch arms its timers with absolute
/// deadlines, which a wall-clock faker such as libfaketime shifts by its offset (a `Task.sleep` of
/// 250 ms under `faketime -f -1h` sleeps an hour), and the forwarder's scheduler must keep its
/// 250 ms tick whatever happens to the clocks. The thread blocks only in `poll`, never on the
/// cooperative pool, and ends when the signal is released.
final class WakeSignal: Sendable {
    private let core = Core()

    init() {
        core.startThread()
    }

    deinit { core.close() }

    func signal() {
        core.signal()
    }

    /// Returns when signalled, or after `timeout`.
    func wait(upTo timeout: Duration) async {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        await core.wait(milliseconds: milliseconds)
    }

    /// The state and the timer thread, kept apart so the thread does not keep the signal alive.
    private final class Core: Sendable {
        private struct State {
            var pending = false
            var waiter: CheckedContinuation<Void, Never>?
            /// When the current wait ends (`CLOCK_MONOTONIC` milliseconds).
            var deadline: Int64?
            /// Until when the thread's `poll` sleeps (`nil`: without a timeout, or awake): a wait
            /// that ends no earlier needs no interruption, the thread wakes in time and sleeps on.
            var sleepingUntil: Int64?
            var closed = false
        }

        private let state = Mutex(State())
        /// A pipe that interrupts the thread's `poll` (a new deadline, or closing).
        private let readFD: Int32
        private let writeFD: Int32

        init() {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            }
            readFD = fds[0]
            writeFD = fds[1]
        }

        func startThread() {
            let thread = Thread { [self] in run() }
            thread.name = "pulse.gateway.tick"
            thread.start()
        }

        func close() {
            state.withLock { $0.closed = true }
            interrupt()
        }

        func signal() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiter {
                    state.waiter = nil
                    state.deadline = nil
                    return waiter
                }
                state.pending = true
                return nil
            }
            waiter?.resume()
        }

        func wait(milliseconds: Int64) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = GatewayClock.monotonic.now()
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || state.closed {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    state.deadline = now + milliseconds
                    return false
                }
                if resumeNow {
                    continuation.resume()
                } else if state.withLock({ state in state.sleepingUntil.map { $0 > now + milliseconds } ?? true }) {
                    interrupt()
                }
            }
        }

        private func interrupt() {
            var byte: UInt8 = 1
            _ = Glibc.write(writeFD, &byte, 1)
        }

        private func run() {
            var descriptor = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let timeout = state.withLock { state -> Int32? in
                    state.sleepingUntil = nil
                    guard !state.closed else { return nil }
                    guard let deadline = state.deadline else { return -1 }
                    state.sleepingUntil = deadline
                    return Int32(clamping: max(0, deadline - GatewayClock.monotonic.now()))
                }
                guard let timeout else { break }
                descriptor.revents = 0
                _ = poll(&descriptor, 1, timeout)
                if descriptor.revents & Int16(POLLIN) != 0 { _ = read(readFD, &buffer, buffer.count) }
                let now = GatewayClock.monotonic.now()
                let expired = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    guard let deadline = state.deadline, now >= deadline, let waiter = state.waiter else { return nil }
                    state.waiter = nil
                    state.deadline = nil
                    return waiter
                }
                expired?.resume()
            }
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        // The descriptors close only when neither the thread nor the signal holds the core, so a
        // late `interrupt()` never writes to a descriptor number that was reused.
        deinit {
            Glibc.close(readFD)
            Glibc.close(writeFD)
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
