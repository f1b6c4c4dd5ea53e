import CLinuxEvents
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket of a server and the set of its open connections.
final class Listener: EventLoopSource, @unchecked Sendable {
    // `let` properties and `stopped` are safe from any thread; `var`s belong to the loop thread.
    let loop: MsgTransEventLoop
    let statistics: MsgTransStatistics
    private let fd: Int32
    private let configuration: MsgTransServerConfiguration
    private let makeDelegate: @Sendable (MsgTransConnection) -> any MsgTransConnectionDelegate

    private let stopped = OnceValue<Void>()

    private enum Phase {
        case accepting
        case draining
        case stopped
    }

    private var phase = Phase.accepting
    private var registration: UInt64 = 0
    private var listening = true
    private var connections: [ObjectIdentifier: MsgTransConnection] = [:]
    private var graceTimer: TimerID?
    private var resumeTimer: TimerID?

    init(
        fd: Int32, loop: MsgTransEventLoop, configuration: MsgTransServerConfiguration,
        statistics: MsgTransStatistics,
        makeDelegate: @escaping @Sendable (MsgTransConnection) -> any MsgTransConnectionDelegate
    ) {
        self.fd = fd
        self.loop = loop
        self.configuration = configuration
        self.statistics = statistics
        self.makeDelegate = makeDelegate
    }

    /// Registers the listening socket with the loop.
    func activate() async throws(MsgTransRuntimeError) {
        let promise = OneShot<Result<Void, MsgTransRuntimeError>>()
        let result = await withCheckedContinuation { continuation in
            guard promise.install(continuation) else { return }
            let submitted = loop.execute {
                do throws(MsgTransRuntimeError) {
                    self.registration = try self.loop.register(fd: self.fd, events: EPOLLIN.rawValue, source: self)
                    promise.complete(.success(()))
                } catch {
                    Glibc.close(self.fd)
                    promise.complete(.failure(error))
                }
            }
            if !submitted {
                Glibc.close(fd)
                promise.complete(.failure(MsgTransConnection.loopStopped))
            }
        }
        try result.get()
    }

    func beginShutdown() {
        let submitted = loop.execute { self.drain() }
        if !submitted {
            markStopped()
        }
    }

    func waitUntilStopped() async {
        await stopped.wait()
    }

    // MARK: - Loop thread

    func handleEvents(_ events: UInt32) {
        guard phase == .accepting else { return }
        for _ in 0..<256 {
            switch Socket.accept(fd) {
            case .success(nil):
                return
            case .success(let client?):
                admit(client)
            case .failure(let error):
                // Typically EMFILE/ENFILE: stop polling the listener for a moment instead of spinning.
                _ = error
                pauseAccepting()
                return
            }
        }
    }

    private func admit(_ client: Int32) {
        guard connections.count < configuration.maxConnections else {
            statistics.add(.rejectedConnections)
            Glibc.close(client)
            return
        }
        Socket.setNoDelay(client)
        let connection = MsgTransConnection(
            fd: client, eventLoop: loop, configuration: configuration.connection, statistics: statistics)
        do {
            try connection.activate()
        } catch {
            Glibc.close(client)
            return
        }
        if configuration.maxPartialFrameBytes > 0 {
            connection.partialFrameCap = configuration.maxPartialFrameBytes
        }
        if let timeout = configuration.establishTimeout, timeout > .zero {
            connection.establishTimer = loop.scheduleTimer(at: loop.deadline(after: timeout)) {
                [weak connection, statistics] in
                guard let connection else { return }
                connection.establishTimer = nil
                statistics.add(.establishTimeouts)
                connection.teardown(
                    MsgTransRuntimeError(.timeout, "the connection was not established within \(timeout)"), flush: true)
            }
        }
        connections[ObjectIdentifier(connection)] = connection
        connection.onClose = { [weak self] closed in
            guard let self else { return }
            connections.removeValue(forKey: ObjectIdentifier(closed))
            stopIfDrained()
        }
        connection.delegate = makeDelegate(connection)
    }

    private func pauseAccepting() {
        guard listening, resumeTimer == nil else { return }
        listening = false
        loop.modify(fd: fd, registration: registration, events: 0)
        resumeTimer = loop.scheduleTimer(at: loop.deadline(after: .milliseconds(100))) { [self] in
            resumeTimer = nil
            guard phase == .accepting else { return }
            listening = true
            loop.modify(fd: fd, registration: registration, events: EPOLLIN.rawValue)
        }
    }

    func flushQueuedOutput() {}

    func loopWillStop() {
        closeListener()
        // Connections close themselves through their own loopWillStop.
        phase = .draining
        stopIfDrained()
    }

    private func drain() {
        guard phase == .accepting else { return }
        phase = .draining
        closeListener()
        graceTimer = loop.scheduleTimer(at: loop.deadline(after: configuration.shutdownGracePeriod)) {
            [self] in
            graceTimer = nil
            for connection in Array(connections.values) {
                connection.teardown(
                    MsgTransRuntimeError(.connectionClosed, "server shutdown grace period ended"), flush: true)
            }
        }
        for connection in Array(connections.values) {
            connection.beginDrain()
        }
        stopIfDrained()
    }

    private func closeListener() {
        if let resumeTimer {
            loop.cancelTimer(resumeTimer)
            self.resumeTimer = nil
        }
        guard registration != 0 else { return }
        loop.unregister(fd: fd, registration: registration)
        registration = 0
        Glibc.close(fd)
    }

    private func stopIfDrained() {
        guard phase == .draining, connections.isEmpty else { return }
        phase = .stopped
        if let graceTimer {
            loop.cancelTimer(graceTimer)
            self.graceTimer = nil
        }
        markStopped()
    }

    private func markStopped() {
        stopped.set(())
    }
}
