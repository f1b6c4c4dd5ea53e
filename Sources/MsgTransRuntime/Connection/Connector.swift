import CLinuxEvents
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// One non-blocking connect attempt to one address, bounded by a deadline and cancellation.
final class Connector: EventLoopSource, @unchecked Sendable {
    // `let` properties are safe from any thread; `var`s belong to the loop thread.
    private let address: SocketAddress
    private let deadline: UInt64
    private let loop: MsgTransEventLoop
    private let configuration: MsgTransConfiguration
    private let delegate: (any MsgTransConnectionDelegate)?
    private let statistics: MsgTransStatistics
    private let promise = OneShot<Result<MsgTransConnection, MsgTransRuntimeError>>()

    private var fd: Int32 = -1
    private var registration: UInt64 = 0
    private var timer: TimerID?
    private var done = false

    init(
        address: SocketAddress, deadline: UInt64, loop: MsgTransEventLoop, configuration: MsgTransConfiguration,
        delegate: (any MsgTransConnectionDelegate)?, statistics: MsgTransStatistics
    ) {
        self.address = address
        self.deadline = deadline
        self.loop = loop
        self.configuration = configuration
        self.delegate = delegate
        self.statistics = statistics
    }

    func run() async throws(MsgTransRuntimeError) -> MsgTransConnection {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard promise.install(continuation) else { return }
                if !loop.execute({ self.begin() }) {
                    promise.complete(.failure(MsgTransConnection.loopStopped))
                }
            }
        } onCancel: {
            if promise.complete(.failure(MsgTransRuntimeError(.cancelled, "connect cancelled"))) {
                loop.execute { self.fail(nil) }
            }
        }
        return try result.get()
    }

    // MARK: - Loop thread

    private func begin() {
        guard !promise.isCompleted else { return }
        do {
            fd = try Socket.makeStream(family: address.family)
        } catch {
            fail(error)
            return
        }
        Socket.setNoDelay(fd)
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if result == 0 {
            established()
            return
        }
        guard errno == EINPROGRESS else {
            fail(.system("connect(\(address))", errno: errno, code: .connectFailed))
            return
        }
        do {
            registration = try loop.register(fd: fd, events: EPOLLOUT.rawValue, source: self)
        } catch {
            fail(error)
            return
        }
        timer = loop.scheduleTimer(at: deadline) { [self] in
            timer = nil
            fail(MsgTransRuntimeError(.timeout, "connect to \(address) timed out"))
        }
    }

    func handleEvents(_ events: UInt32) {
        guard !done else { return }
        let number = Socket.pendingError(fd)
        guard number == 0 else {
            fail(.system("connect(\(address))", errno: number, code: .connectFailed))
            return
        }
        loop.unregister(fd: fd, registration: registration)
        registration = 0
        established()
    }

    func flushQueuedOutput() {}

    func loopWillStop() {
        fail(MsgTransConnection.loopStopped)
    }

    private func established() {
        done = true
        cancelTimer()
        let connection = MsgTransConnection(
            fd: fd, eventLoop: loop, configuration: configuration, statistics: statistics)
        connection.delegate = delegate
        do {
            try connection.activate()
        } catch {
            Glibc.close(fd)
            promise.complete(.failure(error))
            return
        }
        if !promise.complete(.success(connection)) {
            // Cancelled while the handshake completed: nobody will use this connection.
            connection.teardown(MsgTransRuntimeError(.cancelled, "connect cancelled"), flush: false)
        }
    }

    /// Ends the attempt; `error` is `nil` when the caller has already been told (cancellation).
    private func fail(_ error: MsgTransRuntimeError?) {
        guard !done else { return }
        done = true
        cancelTimer()
        if fd >= 0 {
            if registration != 0 {
                loop.unregister(fd: fd, registration: registration)
            }
            Glibc.close(fd)
            fd = -1
        }
        if let error {
            promise.complete(.failure(error))
        }
    }

    private func cancelTimer() {
        if let timer {
            loop.cancelTimer(timer)
            self.timer = nil
        }
    }
}
