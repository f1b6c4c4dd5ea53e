import CMicroHTTPD
import CPulseShims
import Glibc
import PulseKit
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd that hands complete requests to an async Swift handler.
///
/// libmicrohttpd's event-loop threads (``HTTPServerConfiguration/threadCount``, each with its own
/// epoll loop) read requests, enforce the limits, and buffer the body. When a request is complete its
/// connection is suspended and the handler runs in a `Task`; when the handler returns, the response is
/// handed back, the connection is resumed, and libmicrohttpd sends it with `Content-Length` and keeps
/// the connection alive unless the client or the response asked otherwise. A client that disconnects
/// while its handler runs is noticed only after the handler returns; the response is then dropped.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0)) { request in
///     HTTPResponse(status: .ok, body: Array("{}".utf8))
/// }
/// try server.start()
/// // ... server.port ...
/// await server.shutdown()
/// ```
///
/// Lifecycle: ``start()`` then ``shutdown(gracePeriod:)``, or ``run()``, which starts the server and
/// returns once it has been shut down (cancelling the task running it shuts it down). A server is
/// started once; make a new one to serve again. Releasing a running server stops it at once, without
/// the drain: handlers still running are answered with 503.
package final class HTTPServer: Sendable {
    /// The configuration the server was made with.
    package let configuration: HTTPServerConfiguration

    private struct DaemonHandle: @unchecked Sendable {
        let pointer: OpaquePointer
        /// The `pg_tls_slot` of an HTTPS daemon, freed after the daemon stops.
        let tls: OpaquePointer?

        /// Stops the daemon and frees its TLS slot.
        func stop() {
            MHD_stop_daemon(pointer)
            if let tls { pg_tls_slot_free(tls) }
        }
    }

    private enum Phase {
        case idle
        case running(DaemonHandle, port: Int)
        case stopping(port: Int)
        case stopped
    }

    private struct Lifecycle {
        var phase: Phase = .idle
        /// Callers of ``run()`` and repeated ``shutdown(gracePeriod:)`` waiting for `.stopped`.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let core: ServerCore
    private let lifecycle = Mutex<Lifecycle>(Lifecycle())
    /// Set while a shutdown waits for the requests in progress (see ``isDraining``).
    private let draining = Atomic<Bool>(false)

    /// Creates a server; nothing is bound until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: addresses, limits and threads.
    ///   - handler: called once per complete request, concurrently for different connections. It
    ///     runs in a `Task` on Swift's cooperative pool; the body it receives is still
    ///     content-encoded (see ``BodyDecoder``).
    package convenience init(
        configuration: HTTPServerConfiguration,
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) {
        self.init(configuration: configuration) { request, responder in
            Task { responder.respond(await handler(request)) }
        }
    }

    /// Creates a server whose requests are answered through an ``HTTPResponder`` instead of a task.
    ///
    /// `dispatch` is called once per complete request **on the libmicrohttpd thread that read it**,
    /// with its connection suspended. It may answer at once, or hand the responder on — to a task,
    /// or to another thread (a database commit thread) that answers when its work is done; the
    /// connection is resumed from there, without a hop through Swift's cooperative pool. It must not
    /// block (no I/O, no waiting): while it runs, that thread's other connections wait, so CPU work
    /// done here should be bounded (the gateway does only small requests' validation and mapping
    /// here). Every request must be answered exactly once (a second answer is dropped).
    package init(
        configuration: HTTPServerConfiguration,
        dispatch: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
    ) {
        self.configuration = configuration
        core = ServerCore(handler: dispatch, configuration: configuration)
    }

    /// The memory budget of requests in flight (``HTTPServerConfiguration/requestMemoryBudget``);
    /// its ``RequestMemoryBudget/reservedBytes`` is what they hold now.
    package var memoryBudget: RequestMemoryBudget { core.memoryBudget }

    deinit {
        // A server dropped without shutdown(): stop it now, synchronously and briefly.
        if case .running(let daemon, _) = lifecycle.withLock({ $0.phase }) {
            core.shuttingDown.store(true, ordering: .relaxed)
            _ = core.closeSuspensions(answering: core.unavailable)
            var waited = 0
            while core.activeRequests.load(ordering: .relaxed) > 0 && waited < 1000 {
                usleep(1000)
                waited += 1
            }
            daemon.stop()
            core.deadlines.stop()
        }
    }

    /// The bound TCP port while running (the real one when the configuration asked for port 0),
    /// otherwise `nil`.
    package var port: Int? {
        lifecycle.withLock { state in
            switch state.phase {
            case .running(_, let port): return port
            case .stopping(let port): return port
            case .idle, .stopped: return nil
            }
        }
    }

    /// `true` from the moment ``shutdown(gracePeriod:)`` is called.
    package var isShuttingDown: Bool { core.shuttingDown.load(ordering: .relaxed) }

    /// `true` while ``shutdown(gracePeriod:)`` waits for the requests in progress: new connections
    /// are refused and the grace period runs (until the daemon stops).
    package var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Binds the address and starts serving on libmicrohttpd's threads.
    ///
    /// - Throws: ``HTTPServerError`` with `invalidConfiguration`, `startFailed` (address in use,
    ///   no IPv6 on this host), `tlsCertificate`/`tlsKey` (``HTTPServerConfiguration/tls``) or
    ///   `invalidState` (already started).
    package func start() throws(HTTPServerError) {
        try configuration.validate()
        let address = try ListenAddress(host: configuration.host, port: configuration.port)
        try lifecycle.withLock { state throws(HTTPServerError) in
            guard case .idle = state.phase else {
                throw HTTPServerError(.invalidState, "the server was already started")
            }
            let slot = try makeTLSSlot()
            // A fixed port is bound to its credentials before the first connection can arrive; port 0
            // once it is known (no client can know it before start returns).
            if let slot, configuration.port != 0 {
                do throws(HTTPServerError) {
                    try bindTLSSlot(slot, port: configuration.port)
                } catch {
                    pg_tls_slot_free(slot)
                    throw error
                }
            }
            let daemon: OpaquePointer
            do throws(HTTPServerError) {
                daemon = try startDaemon(address, tls: slot != nil)
            } catch {
                if let slot { pg_tls_slot_free(slot) }
                throw error
            }
            let bound = Int(pg_mhd_bound_port(daemon))
            let port = bound != 0 ? bound : configuration.port
            let handle = DaemonHandle(pointer: daemon, tls: slot)
            if let slot, configuration.port == 0 {
                do throws(HTTPServerError) {
                    try bindTLSSlot(slot, port: port)
                } catch {
                    handle.stop()
                    throw error
                }
            }
            core.deadlines.start()
            state.phase = .running(handle, port: port)
        }
    }

    /// The native slot holding ``HTTPServerConfiguration/tls``, or `nil` for plain HTTP.
    private func makeTLSSlot() throws(HTTPServerError) -> OpaquePointer? {
        guard let tls = configuration.tls else { return nil }
        let native = try tls.makeNative()
        guard let slot = pg_tls_slot_create(native) else {
            pg_tls_credentials_free(native)
            throw HTTPServerError(.startFailed, "out of memory for the TLS credentials")
        }
        return slot
    }

    private func bindTLSSlot(_ slot: OpaquePointer, port: Int) throws(HTTPServerError) {
        guard pg_tls_slot_bind_port(slot, UInt16(port)) == 0 else {
            throw HTTPServerError(
                .startFailed, "another HTTPS server of this process already serves port \(port) (or 64 ports are)")
        }
    }

    /// Replaces the TLS certificate and key of a running HTTPS server, without a restart and
    /// without closing a connection: every TLS handshake from now on uses `credentials`;
    /// connections already established keep the session they negotiated. The credentials are
    /// parsed before anything changes, so a bad pair leaves the old one serving.
    ///
    /// - Throws: ``HTTPServerError`` with `invalidState` when the server is not running or does not
    ///   serve HTTPS, `tlsCertificate`/`tlsKey` for credentials that cannot be used.
    package func replaceTLSCredentials(_ credentials: TLSCredentials) throws(HTTPServerError) {
        try lifecycle.withLock { state throws(HTTPServerError) in
            guard case .running(let daemon, _) = state.phase, let slot = daemon.tls else {
                throw HTTPServerError(.invalidState, "the server is not serving HTTPS")
            }
            pg_tls_slot_replace(slot, try credentials.makeNative())
        }
    }

    private func startDaemon(_ address: ListenAddress, tls: Bool) throws(HTTPServerError) -> OpaquePointer {
        var storage = address.storage
        var options = pg_mhd_options()
        options.tls = tls ? 1 : 0
        options.flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | address.flags
        options.port = UInt16(configuration.port)
        options.connection_limit = UInt32(clamping: configuration.connectionLimit)
        options.per_ip_connection_limit = UInt32(clamping: configuration.perAddressConnectionLimit)
        options.connection_timeout_s = configuration.idleTimeoutSeconds
        options.thread_pool_size = configuration.threadCount > 1 ? UInt32(configuration.threadCount) : 0
        options.connection_memory_limit = configuration.headerMemoryLimit
        options.listen_backlog = UInt32(clamping: configuration.listenBacklog)
        let context = Unmanaged.passUnretained(core).toOpaque()
        options.notify_connection = { cls, connection, _, event in
            guard let cls, let connection else { return }
            let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
            if event == .CONNECTION_NOTIFY_STARTED {
                core.deadlines.accepted(connection, socket: pg_mhd_connection_fd(connection))
            } else {
                core.deadlines.closed(connection)
            }
        }
        options.notify_connection_context = context
        options.uri_log = { cls, target, connection in
            guard let cls, let connection else { return nil }
            return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().sawTarget(target, connection: connection)
        }
        options.uri_log_context = context
        options.accept_policy = { cls, _, _ in
            guard let cls else { return .NO }
            return Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().shuttingDown.load(ordering: .relaxed)
                ? .NO : .YES
        }
        options.accept_policy_context = context
        let daemon = withUnsafeMutablePointer(to: &storage) { storagePointer -> OpaquePointer? in
            if storagePointer.pointee != nil {
                options.bind_address = UnsafeRawPointer(storagePointer).assumingMemoryBound(to: sockaddr.self)
            }
            return pg_mhd_start_daemon(
                &options,
                { cls, connection, url, method, _, uploadData, uploadDataSize, contextPointer in
                    guard let cls, let connection, let uploadDataSize, let contextPointer else { return .NO }
                    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
                    return core.handle(
                        connection: connection, url: url, method: method, uploadData: uploadData,
                        uploadDataSize: uploadDataSize, contextPointer: contextPointer)
                }, context,
                { cls, connection, contextPointer, _ in
                    guard let cls else { return }
                    Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().completed(
                        connection: connection, contextPointer: contextPointer)
                }, context)
        }
        guard let daemon else {
            throw HTTPServerError(
                .startFailed,
                "could not listen on \(configuration.host) port \(configuration.port) (address in use or unavailable)")
        }
        return daemon
    }

    /// Stops the server gracefully.
    ///
    /// New connections are no longer served: each is closed as soon as it is accepted (the accept
    /// policy refuses it; libmicrohttpd 0.9.75's `MHD_quiesce_daemon` is not used because it races its
    /// worker threads over the listening socket's epoll registration and aborts the process). New
    /// requests on open keep-alive connections get 503 with `Retry-After` and `Connection: close`.
    /// Requests already in progress — being received or being handled — are waited for until their
    /// responses are sent, for at most `gracePeriod`; handlers still running then are answered with
    /// 503 for them (their own responses are dropped when they return), as are requests whose bodies
    /// finish arriving after that point. Then the daemon is stopped, the listening socket and every
    /// remaining connection closed. Calling it again, or concurrently, waits for the same shutdown; on
    /// a server that never started it just marks it stopped. Cancelling the calling task does not
    /// shorten the drain.
    package func shutdown(gracePeriod: Duration = .seconds(10)) async {
        core.shuttingDown.store(true, ordering: .relaxed)
        let daemon: DaemonHandle? = lifecycle.withLock { state in
            switch state.phase {
            case .running(let daemon, let port):
                state.phase = .stopping(port: port)
                return daemon
            case .idle:
                state.phase = .stopped
                return nil
            case .stopping, .stopped:
                return nil
            }
        }
        guard let daemon else {
            finishStopping(daemonStopped: false)
            await waitUntilStopped()
            return
        }
        // An unstructured task does not inherit the caller's cancellation: once begun, the drain
        // always runs its course (a cancelled Task.sleep would otherwise turn the wait into a spin).
        await Task { await self.drainAndStop(daemon, gracePeriod: gracePeriod) }.value
    }

    private func drainAndStop(_ daemon: DaemonHandle, gracePeriod: Duration) async {
        draining.store(true, ordering: .relaxed)
        defer { draining.store(false, ordering: .relaxed) }
        let clock = ContinuousClock()
        let drained = await waitForIdle(until: clock.now.advanced(by: gracePeriod))
        // Also closes the window in which a request that began just before the flag was set could
        // still suspend its connection after the wait saw no requests.
        let forced = core.closeSuspensions(answering: core.unavailable)
        if !drained || forced > 0 {
            _ = await waitForIdle(until: clock.now.advanced(by: .seconds(1)))
        }
        daemon.stop()
        core.deadlines.stop()
        finishStopping(daemonStopped: true)
    }

    /// Marks the server stopped (when the daemon is gone, or it never ran) and wakes the waiters.
    private func finishStopping(daemonStopped: Bool) {
        let waiters = lifecycle.withLock { state -> [CheckedContinuation<Void, Never>] in
            if daemonStopped { state.phase = .stopped }
            guard case .stopped = state.phase else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Starts the server if it is not running yet and returns once it has been shut down.
    ///
    /// Cancelling the calling task starts ``shutdown(gracePeriod:)`` with the default grace period.
    ///
    /// - Throws: ``HTTPServerError`` when the server cannot start.
    package func run() async throws(HTTPServerError) {
        let needsStart = lifecycle.withLock { state in
            if case .idle = state.phase { return true }
            return false
        }
        if needsStart { try start() }
        await withTaskCancellationHandler {
            await waitUntilStopped()
        } onCancel: {
            Task { await self.shutdown() }
        }
    }

    private func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lifecycle.withLock { state in
                if case .stopped = state.phase { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Waits until no request is in progress, or the deadline passes. Returns whether it got idle.
    private func waitForIdle(until deadline: ContinuousClock.Instant) async -> Bool {
        while core.activeRequests.load(ordering: .relaxed) > 0 {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

}
