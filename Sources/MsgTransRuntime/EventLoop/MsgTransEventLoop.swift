import CLinuxEvents
package import PulseKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Something registered with an event loop: a listener, a connection, a pending connect.
///
/// All methods run on the loop thread.
protocol EventLoopSource: AnyObject {
    /// Handles the epoll event mask reported for the source's descriptor.
    func handleEvents(_ events: UInt32)
    /// Writes queued output; called once per loop iteration after ``EventLoopSource`` asked for it.
    func flushQueuedOutput()
    /// The loop is stopping: release the descriptor and fail whatever is pending.
    func loopWillStop()
}

/// A dedicated thread running an epoll readiness loop that serves many connections.
///
/// All socket I/O of the connections, listeners and connect attempts registered with a loop
/// happens on its thread; other threads hand work to it through an in-memory queue and an
/// `eventfd` wake-up. Descriptors are level-triggered; writable interest is only registered while
/// a connection has unsent output.
///
/// A server creates its own loop unless given one. Client connections use ``shared`` by default,
/// a loop started on first use that runs for the life of the process.
///
/// Every deadline of the loop's connections, listeners and connect attempts (connect, request,
/// establish and shutdown timeouts, half-close linger) is on the loop's ``clock``: production uses
/// ``PulseKit/PulseClock/system``; a test passes a manual clock and advances it, which fires the
/// timers that became due.
package final class MsgTransEventLoop: @unchecked Sendable {
    // Thread-safety: the `let` properties, `inbox`, `loopThread` and `finished` may be used from any
    // thread. Everything marked "loop thread" below is touched only by the loop thread.

    /// The process-wide loop used by client connections when no loop is given.
    package static let shared: MsgTransEventLoop = {
        do {
            return try MsgTransEventLoop(name: "msgtrans-shared", isShared: true)
        } catch {
            fatalError("cannot start the shared msgtrans event loop: \(error)")
        }
    }()

    private struct Inbox {
        var jobs: [@Sendable () -> Void] = []
        var wakeRequested = false
        var stopped = false
    }

    static let readBufferSize = 64 << 10
    private static let wakeRegistration: UInt64 = 0

    let name: String
    /// The clock every deadline on this loop is measured on.
    package let clock: PulseClock
    /// Whether `epoll_wait`'s timeout measures ``clock`` (the system source); for any other
    /// source the loop blocks until a task sleeping on the clock wakes it for the next deadline.
    private let clockIsRealTime: Bool
    private let isShared: Bool
    private let epollFD: Int32
    private let wakeFD: Int32
    private let inbox = Mutex(Inbox())
    private let finished = OnceValue<Void>()
    private let loopThread = Atomic<UInt>(0)

    /// The one read buffer every connection of this loop reads into (loop thread).
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Timers of this loop (loop thread).
    var timers = TimerQueue()
    private var sources: [UInt64: any EventLoopSource] = [:]  // loop thread
    private var nextRegistration: UInt64 = 1  // loop thread
    private var flushQueue: [any EventLoopSource] = []  // loop thread
    private var stopRequested = false  // loop thread
    /// The deadline a task sleeping on a non-real-time ``clock`` will wake the loop for.
    private var armedWake: UInt64?  // loop thread

    /// Starts a loop on a new thread.
    ///
    /// Also raises the soft `RLIMIT_NOFILE` limit of the process to its hard limit (once), since a
    /// loop is meant to hold thousands of sockets.
    ///
    /// - Parameters:
    ///   - name: the thread name (truncated to 15 bytes by the kernel).
    ///   - clock: the clock of every deadline on the loop.
    /// - Throws: ``MsgTransRuntimeError/Code/systemCallFailed`` if epoll, eventfd or the thread
    ///   cannot be created.
    package convenience init(name: String = "msgtrans-loop", clock: PulseClock = .system) throws(MsgTransRuntimeError) {
        try self.init(name: name, clock: clock, isShared: false)
    }

    private init(name: String, clock: PulseClock = .system, isShared: Bool) throws(MsgTransRuntimeError) {
        _ = FileDescriptorLimit.raisedSoftLimit
        self.name = name
        self.clock = clock
        self.clockIsRealTime = clock.source is SystemTimeSource
        self.isShared = isShared
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw .system("epoll_create1", errno: errno) }
        let wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            let number = errno
            close(epollFD)
            throw .system("eventfd", errno: number)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeRegistration
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            let number = errno
            close(epollFD)
            close(wakeFD)
            throw .system("epoll_ctl", errno: number)
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        self.readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        try startThread()
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Stops the loop: every connection, listener and connect attempt on it is closed (their
    /// pending requests fail with ``MsgTransRuntimeError/Code/connectionClosed``), then the thread
    /// exits. Returns when it has. Calling it again returns at once; on ``shared`` it does nothing.
    package func shutdown() async {
        guard !isShared else { return }
        await finished.wait(ifPending: { execute { [self] in stopRequested = true } })
    }

    // MARK: - Cross-thread entry

    /// Whether the caller runs on this loop's thread.
    var isOnLoopThread: Bool {
        pthread_equal(pthread_self(), loopThread.load(ordering: .acquiring)) != 0
    }

    /// Runs `job` on the loop thread soon (in submission order). Returns `false`, without running
    /// it, if the loop has stopped.
    @discardableResult
    func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        if isOnLoopThread {
            return inbox.withLock { inbox in
                guard !inbox.stopped else { return false }
                inbox.jobs.append(job)
                return true
            }
        }
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.stopped else { return (false, false) }
            inbox.jobs.append(job)
            if inbox.wakeRequested { return (true, false) }
            inbox.wakeRequested = true
            return (true, true)
        }
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
        return accepted
    }

    // MARK: - Registration (loop thread)

    /// Adds `fd` to the epoll set; events for it go to `source`.
    func register(fd: Int32, events: UInt32, source: any EventLoopSource) throws(MsgTransRuntimeError) -> UInt64 {
        let registration = nextRegistration
        nextRegistration += 1
        var event = epoll_event()
        event.events = events
        event.data.u64 = registration
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw .system("epoll_ctl(ADD)", errno: errno)
        }
        sources[registration] = source
        return registration
    }

    /// Changes the event mask of a registered descriptor.
    func modify(fd: Int32, registration: UInt64, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = registration
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    /// Removes a descriptor (call before closing it).
    func unregister(fd: Int32, registration: UInt64) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        sources.removeValue(forKey: registration)
    }

    /// Asks for `source.flushQueuedOutput()` at the end of this loop iteration.
    func scheduleFlush(_ source: any EventLoopSource) {
        flushQueue.append(source)
    }

    /// Schedules `action` on the loop thread at the monotonic `deadline` (nanoseconds).
    /// Now on ``clock``, in nanoseconds since its origin: the unit of every deadline on the loop.
    func now() -> UInt64 {
        Self.nanoseconds(clock.now.sinceOrigin)
    }

    /// `now() + duration`, saturating; negative durations count as zero.
    func deadline(after duration: Duration) -> UInt64 {
        let (sum, overflow) = now().addingReportingOverflow(Self.nanoseconds(duration))
        return overflow ? UInt64.max : sum
    }

    /// The non-negative length of `duration` in nanoseconds, saturating.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let components = duration.components
        guard components.seconds >= 0 else { return 0 }
        let seconds = UInt64(components.seconds)
        guard seconds < 18_000_000_000 else { return UInt64.max }
        return seconds * 1_000_000_000 + UInt64(max(0, components.attoseconds) / 1_000_000_000)
    }

    func scheduleTimer(at deadline: UInt64, _ action: @escaping () -> Void) -> TimerID {
        timers.schedule(at: deadline, action)
    }

    func cancelTimer(_ timer: TimerID) {
        timers.cancel(timer)
    }

    // MARK: - The loop

    private func startThread() throws(MsgTransRuntimeError) {
        let result = DetachedThread.start { [self] in run() }
        guard result == 0 else {
            close(epollFD)
            close(wakeFD)
            throw .system("pthread_create", errno: result)
        }
    }

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        _ = pthread_setname_np(pthread_self(), String(decoding: name.utf8.prefix(15), as: UTF8.self))
        let capacity: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }

        while true {
            runJobs()
            runFlushes()
            if stopRequested { break }
            let count = epoll_wait(epollFD, events, capacity, waitTimeout())
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: \(SystemErrorName.describe(errno))")
            }
            for index in 0..<Int(count) {
                let event = events[index]
                if event.data.u64 == Self.wakeRegistration {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                } else if let source = sources[event.data.u64] {
                    source.handleEvents(event.events)
                }
            }
            runTimers()
        }
        finishStopping()
    }

    /// Runs the jobs submitted so far; `stopping` closes the inbox to new ones first, else the next
    /// submission wakes the loop again.
    private func runJobs(stopping: Bool = false) {
        let jobs = inbox.withLock { inbox in
            if stopping {
                inbox.stopped = true
            } else {
                inbox.wakeRequested = false
            }
            defer { inbox.jobs = [] }
            return inbox.jobs
        }
        for job in jobs {
            job()
        }
    }

    private func runFlushes() {
        while !flushQueue.isEmpty {
            let queue = flushQueue
            flushQueue = []
            for source in queue {
                source.flushQueuedOutput()
            }
        }
    }

    private func runTimers() {
        let now = self.now()
        while let action = timers.popExpired(now: now) {
            action()
        }
    }

    private func waitTimeout() -> Int32 {
        if !flushQueue.isEmpty || inbox.withLock({ !$0.jobs.isEmpty }) {
            return 0
        }
        guard let deadline = timers.nextDeadline() else { return -1 }
        let now = self.now()
        guard deadline > now else { return 0 }
        guard clockIsRealTime else {
            armWake(for: deadline)
            return -1
        }
        let milliseconds = (deadline - now + 999_999) / 1_000_000
        return Int32(min(milliseconds, UInt64(Int32.max)))
    }

    /// Starts a task that sleeps on ``clock`` until `deadline` and then wakes the loop, unless one
    /// already will at that time (loop thread). A wake for a cancelled timer only costs a turn.
    private func armWake(for deadline: UInt64) {
        guard armedWake != deadline, deadline < UInt64.max else { return }
        armedWake = deadline
        let instant = PulseInstant(sinceOrigin: .nanoseconds(Int64(clamping: deadline)))
        Task { [clock, weak self] in
            try? await clock.sleep(until: instant)
            self?.execute { [weak self] in self?.disarmWake(for: deadline) }
        }
    }

    /// Forgets the armed wake for `deadline` once it came (loop thread).
    private func disarmWake(for deadline: UInt64) {
        if armedWake == deadline { armedWake = nil }
    }

    private func finishStopping() {
        for source in Array(sources.values) {
            source.loopWillStop()
        }
        runFlushes()
        // Late jobs run once more so that requests submitted meanwhile see closed connections.
        runJobs(stopping: true)
        sources.removeAll()
        timers = TimerQueue()
        close(epollFD)
        close(wakeFD)
        finished.set(())
    }
}
