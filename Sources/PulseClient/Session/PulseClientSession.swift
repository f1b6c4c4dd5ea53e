package import MsgTrans
package import MsgTransRuntime
import PulseJSON
package import PulseKit
package import PulseProtocol
import Synchronization

/// One Pulse client session: a msgtrans connection to a Pulse server, registered with
/// CLIENT_CONNECT for one identity, kept alive with heartbeats and re-established with backoff.
///
/// ```swift
/// let session = PulseClientSession(configuration: PulseClientConfiguration(port: 6000, identity: identity))
/// session.setControlHandler(.telemetryFlush) { _ in .object([]) }
/// let outcome = try await session.uploadEventBatch(encodedJSON: batchBytes)
/// if outcome.isAccepted { /* delete the outbox row */ }
/// await session.close()
/// ```
///
/// ## Lifecycle
///
/// The session connects on demand: the first request (or ``connect()``) opens a TCP connection and
/// sends CLIENT_CONNECT as its first frame. Its result's connection ID, configuration revision,
/// heartbeat interval and collect kinds are kept in ``sessionInfo``. While connected, the session
/// sends CLIENT_HEARTBEAT at the server's interval clamped to 15 s – 5 min. Configuration revisions
/// from connect and heartbeat results are published through ``configRevision`` and
/// ``configRevisionUpdates()``; pulling the configuration is the owner's decision (``pullConfig(currentRevision:timeout:)``).
///
/// When the connection is lost, attempts are spaced by ``PulseReconnectPolicy``: exponential backoff
/// with full jitter, capped per sliding window, using the injected clock and random generator. With
/// ``PulseClientConfiguration/keepConnected`` the session reconnects in the background; otherwise
/// the next request does. A request that finds the session backing off waits for the next allowed
/// attempt if it falls within the request's timeout, else it fails at once with
/// ``PulseClientError/Code/backingOff`` and ``PulseClientError/retryAfter``.
///
/// A heartbeat answered with 401 or 403 (or `accepted: false`) abandons the connection and
/// reconnects at once; a heartbeat that times out abandons it and reconnects with backoff.
///
/// ``close()`` ends the session: pending and later requests fail with ``PulseClientError/Code/sessionClosed``.
/// Background work holds the session until ``close()``, so always close it.
///
/// ## Requests from the server
///
/// BIDIRECTIONAL_CONTROL_RPC requests are answered from the ``PulseClientControlRoute`` allowlist
/// with the handlers registered by ``setControlHandler(_:_:)``; any other route gets 404, a malformed
/// request 400. Handlers run on their own tasks and may send requests on this session.
package final class PulseClientSession: Sendable {
    /// The configuration the session was created with.
    package let configuration: PulseClientConfiguration
    /// Transport counters of all connections of this session (or of the set passed at creation).
    package let statistics: MsgTransStatistics

    private let clock: any PulseClientClock
    private let transport: MsgTransConfiguration
    private let router = ControlRouter()
    private let closedSignal = Broadcast<Bool>()
    private let state: Mutex<LockedState>

    private typealias Attempt = Broadcast<Result<Void, PulseClientError>>
    private typealias Machine = SessionStateMachine<MsgTransConnection>

    private struct LockedState {
        var machine: Machine
        /// The outcome of the running (or last) connection attempt.
        var attempt: Attempt?
        var connectTask: Task<Void, Never>?
        var heartbeatTask: Task<Void, Never>?
        var reconnectTask: Task<Void, Never>?
        var nextSubscriberID: UInt64 = 0
        var subscribers: [UInt64: AsyncStream<Int64>.Continuation] = [:]
    }

    /// Creates a session; nothing is connected until the first request or ``connect()``.
    ///
    /// - Parameters:
    ///   - clock: monotonic and wall time, and sleeping, for heartbeats and backoff.
    ///   - random: the source drawing backoff jitter (PulseKit's one random source).
    ///   - statistics: transport counters to report to; a fresh set by default.
    package init(
        configuration: PulseClientConfiguration, clock: any PulseClientClock = PulseSystemClock(),
        random: RandomSource = .system,
        statistics: MsgTransStatistics = MsgTransStatistics()
    ) {
        self.configuration = configuration
        self.clock = clock
        self.statistics = statistics
        var transport = MsgTransConfiguration()
        transport.requestTimeout = configuration.requestTimeout
        transport.connectTimeout = configuration.connectTimeout
        transport.maxOutstandingRequests = max(configuration.maxInFlightRequests, 1)
        transport.compressionPolicy = CompressionPolicy(compressionMinBytes: configuration.compressionMinBytes)
        transport.overloadResponder = { _ in
            MsgTransReply(ControlRouter.failure(.tooManyRequests, "too many concurrent control requests"))
        }
        transport.failureResponder = { _, error in
            if error.code == .malformedPayload {
                return MsgTransReply(ControlRouter.failure(.badRequest, "the payload cannot be decompressed"))
            }
            return MsgTransReply(ControlRouter.failure(.internalError, "the request could not be handled"))
        }
        self.transport = transport
        state = Mutex(
            LockedState(
                machine: SessionStateMachine(
                    policy: configuration.reconnectPolicy, random: random, keepConnected: configuration.keepConnected))
        )
    }

    // MARK: - State

    /// The server's view of the session while connected, else `nil`.
    package var sessionInfo: PulseSessionInfo? {
        state.withLock { $0.machine.info }
    }

    /// Whether CLIENT_CONNECT has succeeded on the current connection.
    package var isConnected: Bool { sessionInfo != nil }

    /// The latest configuration revision reported by a CONNECT or heartbeat result, kept across
    /// reconnections; `nil` before the first connect.
    package var configRevision: Int64? {
        state.withLock { $0.machine.configRevision }
    }

    /// A stream of configuration revisions: the current one (if known), then every change reported by
    /// CONNECT and heartbeat results. Keeps only the newest unread value; finishes when the session closes.
    package func configRevisionUpdates() -> AsyncStream<Int64> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        let registered = state.withLock { state -> UInt64? in
            guard !state.machine.isClosed else { return nil }
            state.nextSubscriberID += 1
            state.subscribers[state.nextSubscriberID] = continuation
            if let current = state.machine.configRevision {
                continuation.yield(current)
            }
            return state.nextSubscriberID
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Installs (or with `nil` removes) the handler of an allowlisted control route.
    package func setControlHandler(_ route: PulseClientControlRoute, _ handler: PulseControlHandler?) {
        router.setHandler(handler, for: route)
    }

    // MARK: - Requests

    /// Connects now if not connected (or waits for the running attempt) and returns the session information.
    ///
    /// - Throws: ``PulseClientError`` with ``PulseClientError/Code/connectFailed``,
    ///   ``PulseClientError/Code/connectRejected``, ``PulseClientError/Code/backingOff`` (when the
    ///   next attempt is more than ``PulseClientConfiguration/requestTimeout`` away),
    ///   ``PulseClientError/Code/sessionClosed`` or ``PulseClientError/Code/cancelled``.
    @discardableResult
    package func connect() async throws(PulseClientError) -> PulseSessionInfo {
        _ = try await connection(deadline: clock.now + configuration.requestTimeout)
        guard let info = sessionInfo else {
            throw PulseClientError(.disconnected, "the connection closed right after CLIENT_CONNECT")
        }
        return info
    }

    /// Sends one Pulse request and returns the decoded response envelope.
    ///
    /// Connects on demand. A 401 answer means the server no longer knows this session: the session
    /// reconnects (a new CLIENT_CONNECT on a new connection) and sends the request once more,
    /// returning that second response whatever it is. Every other code, including 409, is returned
    /// for the caller to act on (``PulseResponse/senderAction``). The payload is compressed with
    /// ``PulseClientConfiguration/compression`` from ``PulseClientConfiguration/compressionMinBytes``
    /// on, except for CLIENT_HEARTBEAT and CLIENT_APP_UPDATE_CHECK, which are always plain.
    ///
    /// - Parameters:
    ///   - bizType: the named Pulse operation. CLIENT_CONNECT is the session's own and is refused.
    ///   - payload: the plaintext JSON payload.
    ///   - timeout: bounds the wait for a connection (backoff) and, separately, the request; defaults
    ///     to ``PulseClientConfiguration/requestTimeout``.
    /// - Throws: the errors of ``connect()``, plus ``PulseClientError/Code/timeout``,
    ///   ``PulseClientError/Code/disconnected`` (the request may or may not have been processed),
    ///   ``PulseClientError/Code/malformedResponse`` and ``PulseClientError/Code/requestFailed``.
    package func send(bizType: PulseBizType, payload: [UInt8], timeout: Duration? = nil)
        async throws(PulseClientError) -> PulseResponse
    {
        guard bizType != .clientConnect else {
            throw PulseClientError(.requestFailed, "CLIENT_CONNECT is sent by the session itself")
        }
        return try await sendRetryingUnauthorized(bizType: bizType, body: .plaintext(payload), timeout: timeout)
    }

    /// Sends one Pulse request whose payload is already in msgtrans wire form: `wirePayload` is a
    /// stream of `compression` (or the plaintext for `.none`) and goes on the wire byte for byte,
    /// on the first attempt and on the retry after a 401 alike. Otherwise as
    /// ``send(bizType:payload:timeout:)``.
    ///
    /// With `retryingUnauthorized` `false` a 401 is returned as it is, without re-registering or
    /// sending again (the other requests in flight on the connection are left alone): a caller with
    /// several requests in flight decides itself what goes first. Its next request with
    /// `retryingUnauthorized` re-registers when it is answered 401 too. To keep several requests in
    /// flight in FIFO order, see ``submit(bizType:wirePayload:compression:timeout:completion:)``.
    ///
    /// - Throws: the errors of ``send(bizType:payload:timeout:)``.
    package func send(
        bizType: PulseBizType, wirePayload: [UInt8], compression: Compression, timeout: Duration? = nil,
        retryingUnauthorized: Bool = true
    ) async throws(PulseClientError) -> PulseResponse {
        guard bizType != .clientConnect else {
            throw PulseClientError(.requestFailed, "CLIENT_CONNECT is sent by the session itself")
        }
        let body = RequestBody.wire(wirePayload, compression)
        if retryingUnauthorized {
            return try await sendRetryingUnauthorized(bizType: bizType, body: body, timeout: timeout)
        }
        return try await sendOnce(bizType: bizType, body: body, timeout: timeout).response
    }

    /// Hands one request in msgtrans wire form to the session's registered connection without
    /// waiting for the answer (see `MsgTransConnection.submit(bizType:wirePayload:compression:timeout:completion:)`):
    /// `completion` runs once, on the connection's event loop thread, with the response envelope or
    /// the failure (``PulseClientError/Code/timeout``, ``PulseClientError/Code/disconnected``, …).
    /// Requests submitted one after another, also from a completion, reach the wire in that order.
    /// Nothing is retried: a 401 is handed to `completion` as it is.
    ///
    /// - Returns: `false`, without calling `completion`, when the session has no registered
    ///   connection at this moment (connecting, backing off, closed): use ``send(bizType:wirePayload:compression:timeout:retryingUnauthorized:)``,
    ///   which connects on demand.
    package func submit(
        bizType: PulseBizType, wirePayload: [UInt8], compression: Compression, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<PulseResponse, PulseClientError>) -> Void
    ) -> Bool {
        guard bizType != .clientConnect,
            case .connected(let established) = state.withLock({ $0.machine.state })
        else { return false }
        let connection = established.connection
        connection.submit(
            bizType: bizType.rawValue, wirePayload: wirePayload, compression: compression,
            timeout: timeout ?? configuration.requestTimeout
        ) { [weak self] result in
            switch result {
            case .success(let message):
                do throws(PulseClientError) {
                    completion(.success(try PulseResponse(bizType: bizType, payload: message.payload)))
                } catch {
                    completion(.failure(error))
                }
            case .failure(let error):
                completion(.failure(Self.failure(error, bizType: bizType, closed: self?.isClosed ?? true)))
            }
        }
        return true
    }

    /// A request payload: plaintext (compressed by the session's policy) or already in wire form.
    private enum RequestBody {
        case plaintext([UInt8])
        case wire([UInt8], Compression)
    }

    private func sendRetryingUnauthorized(
        bizType: PulseBizType, body: RequestBody, timeout: Duration?
    ) async throws(PulseClientError) -> PulseResponse {
        let first = try await sendOnce(bizType: bizType, body: body, timeout: timeout)
        guard first.response.code == PulseResponseCode.unauthorized.rawValue else {
            return first.response
        }
        await abandon(generation: first.generation, reason: .unauthorized)
        return try await sendOnce(bizType: bizType, body: body, timeout: timeout).response
    }

    /// Uploads one encoded CLIENT_EVENT_BATCH_UPLOAD payload (`{"identity":…,"events":[…],"batchId":…}`).
    ///
    /// The identity inside the batch must match ``PulseClientConfiguration/identity``, or the server
    /// answers 403. Only ``PulseUploadOutcome/accepted`` confirms durable acceptance.
    package func uploadEventBatch(encodedJSON: [UInt8], timeout: Duration? = nil)
        async throws(PulseClientError) -> PulseUploadOutcome
    {
        PulseUploadOutcome(try await send(bizType: .clientEventBatchUpload, payload: encodedJSON, timeout: timeout))
    }

    /// Uploads one encoded CLIENT_CRASH_BATCH_UPLOAD payload. A server without crash upload answers
    /// 501 (``PulseUploadOutcome/rejected(_:)``); crash events inside event batches stay valid.
    package func uploadCrashBatch(encodedJSON: [UInt8], timeout: Duration? = nil)
        async throws(PulseClientError) -> PulseUploadOutcome
    {
        PulseUploadOutcome(try await send(bizType: .clientCrashBatchUpload, payload: encodedJSON, timeout: timeout))
    }

    /// Pulls the complete configuration snapshot with CLIENT_CONFIG_PULL, declaring `currentRevision`
    /// (0 when none is applied) and the identity's capabilities.
    ///
    /// - Throws: the errors of ``send(bizType:payload:timeout:)``; ``PulseClientError/Code/malformedResponse``
    ///   when a success carries no valid snapshot.
    package func pullConfig(currentRevision: Int64, timeout: Duration? = nil)
        async throws(PulseClientError) -> PulseConfigPullOutcome
    {
        let request = ConfigPullRequest(
            configRevision: currentRevision, capabilities: configuration.identity.capabilities)
        let response = try await send(bizType: .clientConfigPull, payload: request.encodeJSON(), timeout: timeout)
        guard response.isSuccess else {
            return .rejected(response)
        }
        return .snapshot(try response.decodeData(as: ConfigSnapshot.self))
    }

    /// Asks whether a newer build of the identity's app exists (CLIENT_APP_UPDATE_CHECK).
    ///
    /// Fails open, as the contract requires: any failure (no connection, timeout, non-zero code,
    /// malformed data) returns ``UpdateCheckResult/noUpdate``. Only `data` is read, never the
    /// root-level compatibility copy.
    package func checkForUpdate(timeout: Duration? = nil) async -> UpdateCheckResult {
        let identity = configuration.identity
        let request = UpdateCheckRequest(
            platform: identity.platform, appKey: identity.appId, packageName: identity.packageName ?? "",
            buildNumber: identity.buildNumber)
        guard
            let response = try? await send(
                bizType: .clientAppUpdateCheck, payload: request.encodeJSON(), timeout: timeout),
            response.isSuccess,
            let result = try? response.decodeData(as: UpdateCheckResult.self)
        else {
            return .noUpdate
        }
        return result
    }

    // MARK: - Closing

    /// Closes the session: background work stops, the connection closes, and every pending or later
    /// request fails with ``PulseClientError/Code/sessionClosed``. Calling it again does nothing.
    package func close() async {
        let closing = state.withLock {
            state -> (Machine.CloseAction, [Task<Void, Never>], Attempt?, [AsyncStream<Int64>.Continuation]) in
            let action = state.machine.close()
            let tasks = [state.connectTask, state.heartbeatTask, state.reconnectTask].compactMap { $0 }
            state.connectTask = nil
            state.heartbeatTask = nil
            state.reconnectTask = nil
            let subscribers = Array(state.subscribers.values)
            state.subscribers = [:]
            return (action, tasks, state.attempt, subscribers)
        }
        let (action, tasks, attempt, subscribers) = closing
        guard case .close(let connection) = action else {
            return
        }
        closedSignal.complete(true)
        attempt?.complete(.failure(Machine.closedError))
        for subscriber in subscribers {
            subscriber.finish()
        }
        for task in tasks {
            task.cancel()
        }
        if let connection {
            await connection.close()
        }
        for task in tasks {
            await task.value
        }
    }

    // MARK: - Connection management

    private var isClosed: Bool {
        state.withLock { $0.machine.isClosed }
    }

    /// Returns the registered connection, connecting or waiting for the running attempt as needed.
    private func connection(deadline: Duration) async throws(PulseClientError) -> (MsgTransConnection, UInt64) {
        while true {
            if Task.isCancelled {
                throw PulseClientError(.cancelled, "cancelled while waiting for a connection")
            }
            let now = clock.now
            let (action, attempt) = state.withLock { state -> (Machine.DemandAction, Attempt?) in
                let action = state.machine.connectionWanted(now: now)
                switch action {
                case .startConnect:
                    let attempt = Attempt()
                    state.attempt = attempt
                    return (action, attempt)
                case .join:
                    return (action, state.attempt)
                case .use, .waitUntil, .fail:
                    return (action, nil)
                }
            }
            switch action {
            case .use(let connection, let generation):
                return (connection, generation)
            case .startConnect(let generation):
                guard let attempt else { continue }
                startConnectTask(generation: generation, attempt: attempt)
                try await wait(for: attempt)
            case .join:
                guard let attempt else { continue }
                try await wait(for: attempt)
            case .waitUntil(let time):
                guard time <= deadline else {
                    throw PulseClientError(
                        .backingOff, "not connected; the next connection attempt is not allowed yet",
                        detail: PulseClientErrorDetail(retryAfter: time - now))
                }
                try await sleep(until: time)
            case .fail(let error):
                throw error
            }
        }
    }

    private func wait(for attempt: Attempt) async throws(PulseClientError) {
        guard let result = await attempt.wait() else {
            throw PulseClientError(.cancelled, "cancelled while waiting for a connection")
        }
        try result.get()
    }

    /// Sleeps on the injected clock until `time`, unless the session closes or the task is cancelled.
    private func sleep(until time: Duration) async throws(PulseClientError) {
        enum Outcome: Sendable {
            case elapsed
            case closed
            case cancelled
        }
        let clock = self.clock
        let closedSignal = self.closedSignal
        let outcome = await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                do {
                    try await clock.sleep(until: time)
                    return .elapsed
                } catch {
                    return .cancelled
                }
            }
            group.addTask {
                await closedSignal.wait() == nil ? .cancelled : .closed
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
        switch outcome {
        case .elapsed:
            return
        case .closed:
            throw Machine.closedError
        case .cancelled:
            throw PulseClientError(.cancelled, "cancelled while waiting to reconnect")
        }
    }

    private func startConnectTask(generation: UInt64, attempt: Attempt) {
        let task = Task { await self.runConnect(generation: generation, attempt: attempt) }
        let closed = state.withLock { state -> Bool in
            if state.machine.isClosed {
                return true
            }
            state.connectTask = task
            return false
        }
        if closed {
            task.cancel()
        }
    }

    private func runConnect(generation: UInt64, attempt: Attempt) async {
        let outcome = await establish(generation: generation)
        if let observer = configuration.handshakeObserver, !isClosed {
            switch outcome {
            case .success: observer(.success(()))
            case .failure(let error) where error.code != .cancelled: observer(.failure(error))
            case .failure: break
            }
        }
        let now = clock.now
        switch outcome {
        case .success(let (connection, info)):
            let action = state.withLock {
                $0.machine.connectSucceeded(generation: generation, connection: connection, info: info, now: now)
            }
            switch action {
            case .connected(_, let heartbeatAt, let revision):
                startHeartbeat(generation: generation, at: heartbeatAt)
                if let revision {
                    publish(revision: revision)
                }
                attempt.complete(.success(()))
                // A close that happened before the session recorded the connection was ignored.
                if connection.isClosed {
                    transportClosed(generation: generation)
                }
            case .discard(let stale):
                await stale.close()
                attempt.complete(.failure(Machine.closedError))
            }
        case .failure(let error):
            let action = state.withLock { $0.machine.connectFailed(generation: generation, now: now) }
            if case .failWaiters(let reconnectAt?) = action {
                scheduleReconnect(at: reconnectAt)
            }
            attempt.complete(.failure(isClosed ? Machine.closedError : error))
        }
    }

    /// Opens a TCP connection and registers it with CLIENT_CONNECT.
    private func establish(generation: UInt64) async -> Result<(MsgTransConnection, PulseSessionInfo), PulseClientError>
    {
        let delegate = SessionConnectionDelegate(
            session: self, generation: generation, router: router, replyCompression: configuration.compression)
        let connection: MsgTransConnection
        do throws(MsgTransRuntimeError) {
            connection = try await MsgTransConnection.connect(
                host: configuration.host, port: configuration.port, configuration: transport, delegate: delegate,
                statistics: statistics)
        } catch {
            if error.code == .cancelled {
                return .failure(PulseClientError(.cancelled, "connect cancelled", underlying: error))
            }
            return .failure(
                PulseClientError(
                    .connectFailed, "cannot connect to \(configuration.host):\(configuration.port)", underlying: error))
        }
        do throws(PulseClientError) {
            let message = try await request(
                on: connection, bizType: .clientConnect, payload: configuration.identity.encodeJSON(),
                compression: .none, timeout: configuration.requestTimeout)
            let response = try PulseResponse(bizType: .clientConnect, payload: message.payload)
            guard response.isSuccess else {
                throw PulseClientError(
                    .connectRejected, "CLIENT_CONNECT rejected: \(response.msg ?? "no message")",
                    detail: PulseClientErrorDetail(responseCode: response.code))
            }
            let result = try response.decodeData(as: ConnectResult.self)
            guard result.connected else {
                throw PulseClientError(
                    .connectRejected, "CLIENT_CONNECT answered without connected: true",
                    detail: PulseClientErrorDetail(responseCode: response.code))
            }
            let info = PulseSessionInfo(
                connectionId: result.connectionId, protocolVersion: result.protocolVersion,
                serverTimeMs: result.serverTimeMs, configRevision: result.configRevision,
                serverHeartbeatIntervalMs: result.heartbeatIntervalMs,
                collectKinds: result.collectKinds)
            return .success((connection, info))
        } catch {
            await connection.close()
            return .failure(error)
        }
    }

    /// Called by a connection's delegate (on its event loop thread) when the transport closed.
    func transportClosed(generation: UInt64) {
        let now = clock.now
        let (action, heartbeat) = state.withLock { state -> (Machine.LostAction, Task<Void, Never>?) in
            let action = state.machine.connectionClosed(generation: generation, now: now)
            guard case .lost = action else { return (action, nil) }
            let heartbeat = state.heartbeatTask
            state.heartbeatTask = nil
            return (action, heartbeat)
        }
        heartbeat?.cancel()
        if case .lost(let reconnectAt?) = action {
            scheduleReconnect(at: reconnectAt)
        }
    }

    /// Gives up on connection `generation` (see ``SessionStateMachine/AbandonReason``).
    private func abandon(generation: UInt64, reason: Machine.AbandonReason) async {
        let now = clock.now
        let (action, heartbeat) = state.withLock { state -> (Machine.AbandonAction, Task<Void, Never>?) in
            let action = state.machine.abandonConnection(generation: generation, reason: reason, now: now)
            guard case .close = action else { return (action, nil) }
            let heartbeat = state.heartbeatTask
            state.heartbeatTask = nil
            return (action, heartbeat)
        }
        guard case .close(let connection, let reconnectAt) = action else {
            return
        }
        heartbeat?.cancel()
        if let reconnectAt {
            scheduleReconnect(at: reconnectAt)
        }
        await connection.close()
    }

    private func scheduleReconnect(at time: Duration) {
        let task = Task { await self.reconnectLoop(at: time) }
        let previous: Task<Void, Never>? = state.withLock { state in
            if state.machine.isClosed {
                return task
            }
            let previous = state.reconnectTask
            state.reconnectTask = task
            return previous
        }
        previous?.cancel()
    }

    private func reconnectLoop(at first: Duration) async {
        var time = first
        while true {
            do {
                try await clock.sleep(until: time)
            } catch {
                return
            }
            let now = clock.now
            let (action, attempt) = state.withLock { state -> (Machine.TimerAction, Attempt?) in
                let action = state.machine.reconnectTimerFired(now: now)
                guard case .startConnect = action else { return (action, nil) }
                let attempt = Attempt()
                state.attempt = attempt
                return (action, attempt)
            }
            switch action {
            case .startConnect(let generation):
                if let attempt {
                    startConnectTask(generation: generation, attempt: attempt)
                }
                return
            case .waitUntil(let next):
                time = next
            case .none:
                return
            }
        }
    }

    // MARK: - Heartbeats

    private func startHeartbeat(generation: UInt64, at first: Duration) {
        let task = Task { await self.heartbeatLoop(generation: generation, at: first) }
        let previous: Task<Void, Never>? = state.withLock { state in
            if state.machine.isClosed {
                return task
            }
            let previous = state.heartbeatTask
            state.heartbeatTask = task
            return previous
        }
        previous?.cancel()
    }

    private enum HeartbeatOutcome {
        case accepted(Machine.HeartbeatUpdate)
        case rejected
        case transient
    }

    private func heartbeatLoop(generation: UInt64, at first: Duration) async {
        var next = first
        while true {
            do {
                try await clock.sleep(until: next)
            } catch {
                return
            }
            guard
                case .send(let connection, let connectionId) = state.withLock({
                    $0.machine.heartbeatDue(generation: generation)
                })
            else {
                return
            }
            let request = HeartbeatRequest(
                connectionId: connectionId, clientTimeMs: clock.wallClockMilliseconds,
                sdkVersion: configuration.identity.sdkVersion)
            let outcome: HeartbeatOutcome
            do throws(PulseClientError) {
                let message = try await self.request(
                    on: connection, bizType: .clientHeartbeat, payload: request.encodeJSON(), compression: .none,
                    timeout: configuration.requestTimeout)
                outcome = Self.classifyHeartbeat(message.payload)
            } catch {
                if error.code == .timeout {
                    await abandon(generation: generation, reason: .unresponsive)
                }
                // A closed connection is handled by the close notification, cancellation by close().
                return
            }
            let now = clock.now
            let action: Machine.HeartbeatScheduleAction
            switch outcome {
            case .accepted(let update):
                action = state.withLock {
                    $0.machine.heartbeatAccepted(generation: generation, update: update, now: now)
                }
            case .rejected:
                await abandon(generation: generation, reason: .unauthorized)
                return
            case .transient:
                action = state.withLock { $0.machine.heartbeatFailedTransiently(generation: generation, now: now) }
            }
            guard case .schedule(let at, let revision) = action else {
                return
            }
            if let revision {
                publish(revision: revision)
            }
            next = at
        }
    }

    private static func classifyHeartbeat(_ payload: [UInt8]) -> HeartbeatOutcome {
        guard let envelope = try? PulseEnvelope<HeartbeatResult>(decodingJSON: payload) else {
            return .transient
        }
        switch envelope.knownCode {
        case .ok:
            guard let result = envelope.data else { return .transient }
            guard result.accepted else { return .rejected }
            return .accepted(
                .init(
                    serverTimeMs: result.serverTimeMs, configRevision: result.configRevision,
                    heartbeatIntervalMs: result.heartbeatIntervalMs, collectKinds: result.collectKinds))
        case .unauthorized, .forbidden:
            return .rejected
        default:
            return .transient
        }
    }

    // MARK: - Helpers

    private func sendOnce(
        bizType: PulseBizType, body: RequestBody, timeout: Duration?
    ) async throws(PulseClientError) -> (response: PulseResponse, generation: UInt64) {
        let budget = timeout ?? configuration.requestTimeout
        let (connection, generation) = try await connection(deadline: clock.now + budget)
        let message: MsgTransMessage
        switch body {
        case .plaintext(let payload):
            message = try await request(
                on: connection, bizType: bizType, payload: payload, compression: compression(for: bizType),
                timeout: budget)
        case .wire(let payload, let compression):
            message = try await request(
                on: connection, bizType: bizType, payload: payload, compression: compression, wire: true,
                timeout: budget)
        }
        return (try PulseResponse(bizType: bizType, payload: message.payload), generation)
    }

    private func compression(for bizType: PulseBizType) -> Compression {
        switch bizType {
        case .clientConnect, .clientHeartbeat, .clientAppUpdateCheck:
            return .none
        default:
            return configuration.compression
        }
    }

    private func request(
        on connection: MsgTransConnection, bizType: PulseBizType, payload: [UInt8], compression: Compression,
        wire: Bool = false, timeout: Duration?
    ) async throws(PulseClientError) -> MsgTransMessage {
        do throws(MsgTransRuntimeError) {
            if wire {
                return try await connection.request(
                    bizType: bizType.rawValue, wirePayload: payload, compression: compression, timeout: timeout)
            }
            return try await connection.request(
                bizType: bizType.rawValue, payload: payload, compression: compression, timeout: timeout)
        } catch {
            throw Self.failure(error, bizType: bizType, closed: isClosed)
        }
    }

    /// The session error for a transport failure of a `bizType` request.
    private static func failure(_ error: MsgTransRuntimeError, bizType: PulseBizType, closed: Bool) -> PulseClientError
    {
        if closed {
            return PulseClientError(.sessionClosed, "the session is closed", underlying: error)
        }
        switch error.code {
        case .timeout:
            return PulseClientError(.timeout, "no response to \(bizType) in time", underlying: error)
        case .cancelled:
            return PulseClientError(.cancelled, "\(bizType) cancelled", underlying: error)
        case .connectionClosed:
            return PulseClientError(
                .disconnected, "the connection closed before \(bizType) was answered", underlying: error)
        case .protocolViolation:
            return PulseClientError(.protocolViolation, "the server broke the msgtrans framing", underlying: error)
        case .malformedPayload:
            return PulseClientError(
                .malformedResponse, "the response to \(bizType) cannot be decompressed", underlying: error)
        default:
            return PulseClientError(.requestFailed, "\(bizType) could not be sent", underlying: error)
        }
    }

    private func publish(revision: Int64) {
        state.withLock { state in
            for subscriber in state.subscribers.values {
                subscriber.yield(revision)
            }
        }
    }
}
