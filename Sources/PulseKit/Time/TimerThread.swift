import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that wakes ``SystemTimeSource`` sleepers: it sleeps in `poll(2)` with a relative
/// timeout until the earliest deadline (a pipe interrupts it when an earlier one arrives), then
/// resumes every sleeper that is due. It blocks only in `poll`, never on the cooperative pool.
final class TimerThread: Sendable {
    static let shared = TimerThread()

    private let sleepers = SleeperQueue()
    /// Until when the thread's `poll` sleeps (`nil`: without a timeout, or awake).
    private let sleepingUntil = Mutex<Duration?>(nil)
    private let readFD: Int32
    private let writeFD: Int32

    private init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        readFD = fds[0]
        writeFD = fds[1]
        let thread = Thread { [self] in run() }
        thread.name = "pulse.kit.timer"
        thread.start()
    }

    func sleep(until deadline: Duration, now: () -> Duration) async throws {
        try await sleepers.sleep(until: deadline, now: now) { deadline in
            // A deadline no earlier than the current `poll` timeout needs no interruption.
            let interrupt = sleepingUntil.withLock { until in until.map { deadline < $0 } ?? true }
            if interrupt {
                var byte: UInt8 = 1
                _ = Glibc.write(writeFD, &byte, 1)
            }
        }
    }

    private func run() {
        var descriptor = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let earliest = sleepers.earliestDeadline
            sleepingUntil.withLock { $0 = earliest }
            var timeout: Int32 = -1
            if let earliest {
                let remaining = earliest - SystemTimeSource.shared.now
                let (seconds, attoseconds) = remaining.components
                // Rounded up, so the thread never wakes just before a deadline and spins.
                let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                timeout = Int32(clamping: max(0, milliseconds))
            }
            descriptor.revents = 0
            _ = poll(&descriptor, 1, timeout)
            sleepingUntil.withLock { $0 = nil }
            if descriptor.revents & Int16(POLLIN) != 0 { _ = read(readFD, &buffer, buffer.count) }
            sleepers.wake(upTo: SystemTimeSource.shared.now)
        }
    }
}
